/**
 * @module credentialRows
 * A credential as a row of `switchyard_credentials`, both ways: the
 * metadata in `record` (readable, queryable), the secrets (`token`,
 * `refresh_token`, `oauth.secrets`) sealed with AES-256-GCM in `secrets`,
 * bound to the credential's id, provider, type and flow. A row that cannot
 * be opened (a wrong key, tampering) reads as a record in status `error`
 * that names the reason, never as garbage and never as a failed listing.
 */
import { type Credential, parseCredential } from '../credential.js';
import { type EncryptedEnvelope, type EncryptionKey, openSecrets, sealSecrets } from '../encryption.js';
import { CredentialsError } from '../errors.js';

/** A row as selected. */
export interface CredentialRow {
  id: string;
  provider: string;
  revision: string | number;
  record: Record<string, unknown> | null;
  secrets: unknown;
}

interface SecretFields {
  token: string;
  refresh_token?: string;
  oauth_secrets?: Record<string, string>;
}

function associatedData(id: unknown, provider: unknown, type: unknown, flow: unknown): string {
  return JSON.stringify(['switchyard/credential-pg', 1, id, provider, type, flow ?? null]);
}

/** The `record` and `secrets` columns of `credential`. */
export function encodeRow(credential: Credential, key: EncryptionKey): { record: Record<string, unknown>; secrets: EncryptedEnvelope } {
  const { token, refresh_token, oauth, revision: _revision, ...meta } = credential;
  const record: Record<string, unknown> = { ...meta, ...(oauth ? { oauth: { flow: oauth.flow, params: oauth.params } } : {}) };
  const secrets: SecretFields = { token, ...(refresh_token === undefined ? {} : { refresh_token }) };
  if (oauth && Object.keys(oauth.secrets).length > 0) secrets.oauth_secrets = oauth.secrets;
  return { record, secrets: sealSecrets(secrets, key, associatedData(meta.id, meta.provider, meta.type, oauth?.flow)) };
}

/** The associated data a row's secrets are bound to. */
function rowAssociatedData(row: CredentialRow): string {
  const record = row.record ?? {};
  const oauth = record.oauth as { flow?: string } | undefined;
  return associatedData(row.id, record.provider, record.type, oauth?.flow);
}

/** A row's secrets, opened with whichever of `keys` sealed them; throws `decryption_failed` when none can. */
function openRowSecrets(row: CredentialRow, keys: readonly EncryptionKey[]): SecretFields {
  const secrets = openSecrets(row.secrets, keys, rowAssociatedData(row)) as SecretFields;
  if (typeof secrets !== 'object' || secrets === null || typeof secrets.token !== 'string') {
    throw new CredentialsError('decryption_failed', 'the encrypted block holds no token');
  }
  return secrets;
}

/** Id of the key a row's secrets name (null when the column holds no envelope). */
export function rowKeyId(row: Pick<CredentialRow, 'secrets'>): string | null {
  const secrets = row.secrets as { key_id?: unknown } | null;
  return typeof secrets?.key_id === 'string' ? secrets.key_id : null;
}

/**
 * The row's `secrets` sealed again under `key`, with the same associated
 * data: the credential stays byte-for-byte what it was, only its
 * ciphertext changes. Throws `decryption_failed` when `keys` cannot open it.
 */
export function resealRow(row: CredentialRow, keys: readonly EncryptionKey[], key: EncryptionKey): EncryptedEnvelope {
  return sealSecrets(openRowSecrets(row, keys), key, rowAssociatedData(row));
}

/** The credential of a row; status `error` when its secrets cannot be opened. */
export function decodeRow(row: CredentialRow, keys: readonly EncryptionKey[]): Credential {
  const revision = Number(row.revision);
  const record = row.record ?? {};
  const oauth = record.oauth as { flow?: string; params?: Record<string, string> } | undefined;
  try {
    const secrets = openRowSecrets(row, keys);
    return parseCredential({
      ...record,
      id: row.id,
      token: secrets.token,
      ...(secrets.refresh_token === undefined ? {} : { refresh_token: secrets.refresh_token }),
      ...(oauth ? { oauth: { ...oauth, secrets: secrets.oauth_secrets ?? {} } } : {}),
      revision,
    });
  } catch (error) {
    const message = error instanceof CredentialsError ? error.message : 'unreadable';
    return unreadable(row, record, revision, message);
  }
}

function unreadable(row: CredentialRow, record: Record<string, unknown>, revision: number, message: string): Credential {
  const { refresh_token: _r, token: _t, oauth: _o, status_message: _m, ...meta } = record;
  const base = { id: row.id, provider: row.provider, token: '', status: 'error', status_message: message.slice(0, 2000), revision };
  try {
    return parseCredential({ ...meta, type: 'api_key', ...base });
  } catch {
    const epoch = new Date(0).toISOString();
    return parseCredential({ ...base, type: 'api_key', created_at: epoch, updated_at: epoch });
  }
}
