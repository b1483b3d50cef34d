/**
 * @module credentialFile
 * The JSON format of one credential file in `auths/`, both ways.
 *
 * Reading is lenient with what people write by hand: only `type` and
 * `token` are required; `provider` defaults to the file name's first
 * segment (`openai-team.json` is provider `openai`); `expires_at` may be
 * ISO 8601 or epoch seconds or milliseconds; missing timestamps come from
 * the file's own times. The file name is the id.
 *
 * Writing is strict and versioned (`format_version: 1`). With a key, the
 * secrets (`token`, `refresh_token`, `oauth.secrets`) move into an
 * `encryption` block (see {@link sealSecrets}); the metadata stays readable.
 *
 * Decoding never throws for bad content: a file that cannot be used becomes
 * a record in status `error` whose message says what is wrong, and which
 * never quotes the file (it may hold a token).
 */
import { type Credential, parseCredential } from '../credential.js';
import { type EncryptedEnvelope, type EncryptionKey, openSecrets, sealSecrets } from '../encryption.js';
import { CredentialsError } from '../errors.js';

/** The current file format. */
export const FILE_FORMAT_VERSION = 1;

/** File times used for hand-written files without timestamps. */
export interface FileTimes {
  createdMs: number;
  modifiedMs: number;
}

interface SecretFields {
  token: string;
  refresh_token?: string;
  oauth_secrets?: Record<string, string>;
}

/** The provider a file name implies: its first `-`-separated segment. */
export function providerFromFileName(id: string): string {
  const first = id.split('-')[0] ?? '';
  return /^[A-Za-z0-9][A-Za-z0-9_.]{0,63}$/.test(first) ? first : 'unknown';
}

/** Associated data that binds encrypted secrets to the record's identity. */
function associatedData(provider: unknown, type: unknown, flow: unknown): string {
  return JSON.stringify(['switchyard/credential', FILE_FORMAT_VERSION, provider, type, flow ?? null]);
}

/**
 * Decodes a file's bytes into a credential; `id` is the file name without
 * `.json`. Unusable content gives a record in status `error`.
 */
export function decodeCredentialFile(id: string, text: string, times: FileTimes, keys: readonly EncryptionKey[]): Credential {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    // V8's message quotes the text around the error, which may be a token: keep only the position.
    const position = /position (\d+)/.exec(String((error as Error).message))?.[1];
    return errorRecord(id, undefined, times, `not valid JSON${position ? ` (at byte ${position})` : ''}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return errorRecord(id, undefined, times, 'not a JSON object');
  const fields = raw as Record<string, unknown>;
  try {
    return parseCredential(normalize(id, fields, times, keys));
  } catch (error) {
    const message = error instanceof CredentialsError ? error.message : 'unreadable';
    return errorRecord(id, fields, times, message);
  }
}

function normalize(id: string, fields: Record<string, unknown>, times: FileTimes, keys: readonly EncryptionKey[]): Record<string, unknown> {
  if (fields.format_version !== undefined && fields.format_version !== FILE_FORMAT_VERSION) {
    throw new CredentialsError('invalid_credential', `format_version ${JSON.stringify(fields.format_version)} is not supported`, {
      field: 'format_version',
    });
  }
  const provider = fields.provider ?? providerFromFileName(id);
  const oauth = fields.oauth as Record<string, unknown> | undefined;
  const out: Record<string, unknown> = { ...fields, id, provider };
  delete out.format_version;
  delete out.encryption;
  if (fields.encryption !== undefined) {
    if (fields.token !== undefined || fields.refresh_token !== undefined) {
      throw new CredentialsError('invalid_credential', 'an encrypted file must not also hold a plaintext token', { field: 'token' });
    }
    const secrets = openSecrets(fields.encryption, keys, associatedData(provider, fields.type, oauth?.flow)) as SecretFields;
    if (typeof secrets !== 'object' || secrets === null || typeof secrets.token !== 'string') {
      throw new CredentialsError('decryption_failed', 'the encrypted block holds no token');
    }
    out.token = secrets.token;
    if (secrets.refresh_token !== undefined) out.refresh_token = secrets.refresh_token;
    if (oauth && secrets.oauth_secrets) out.oauth = { ...oauth, secrets: secrets.oauth_secrets };
  }
  if (typeof fields.expires_at === 'number') out.expires_at = epochToIso(fields.expires_at);
  out.created_at ??= new Date(times.createdMs).toISOString();
  out.updated_at ??= new Date(times.modifiedMs).toISOString();
  return out;
}

/** Epoch seconds (below 1e11, i.e. before the year 5138) or milliseconds, as ISO 8601. */
function epochToIso(value: number): string {
  const ms = Math.abs(value) < 1e11 ? value * 1000 : value;
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) {
    throw new CredentialsError('invalid_credential', 'expires_at: not a valid epoch time', { field: 'expires_at' });
  }
  return date.toISOString();
}

/** A status-`error` record for a file that cannot be read at all. */
export function unreadableCredential(id: string, times: FileTimes, message: string): Credential {
  return errorRecord(id, undefined, times, message);
}

/** A status-`error` record that keeps whatever metadata of the file is usable. */
function errorRecord(id: string, fields: Record<string, unknown> | undefined, times: FileTimes, message: string): Credential {
  const pick = <T>(key: string, valid: (v: unknown) => v is T, fallback: T): T =>
    fields && valid(fields[key]) ? (fields[key] as T) : fallback;
  const isProvider = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(v);
  const isType = (v: unknown): v is 'api_key' | 'oauth' => v === 'api_key' || v === 'oauth';
  const isInt = (v: unknown): v is number => Number.isInteger(v) && Math.abs(v as number) <= 1_000_000_000;
  const isLabel = (v: unknown): v is string => typeof v === 'string' && v.length <= 200;
  const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v)) && /^\d{4}-\d\d-\d\dT/.test(v);
  const label = fields && isLabel(fields.label) ? fields.label : undefined;
  return parseCredential({
    id,
    provider: pick('provider', isProvider, providerFromFileName(id)),
    type: pick('type', isType, 'api_key'),
    token: '',
    priority: Math.max(-1_000_000, Math.min(1_000_000, pick('priority', isInt, 0))),
    status: 'error',
    status_message: message.slice(0, 2000),
    ...(label === undefined ? {} : { label }),
    created_at: pick('created_at', isTime, new Date(times.createdMs).toISOString()),
    updated_at: pick('updated_at', isTime, new Date(times.modifiedMs).toISOString()),
    revision: Math.max(0, pick('revision', isInt, 0)),
  });
}

/** The revision written in a file, read without decrypting or validating anything else. */
export function revisionInFile(text: string): number {
  try {
    const revision = (JSON.parse(text) as { revision?: unknown }).revision;
    return Number.isInteger(revision) && (revision as number) >= 0 ? (revision as number) : 0;
  } catch {
    return 0;
  }
}

/**
 * The file content for `credential`: readable metadata first, then the
 * secrets, encrypted when `key` is given.
 */
export function encodeCredentialFile(credential: Credential, key?: EncryptionKey): string {
  const { token, refresh_token, oauth, ...meta } = credential;
  const out: Record<string, unknown> = {
    format_version: FILE_FORMAT_VERSION,
    id: meta.id,
    provider: meta.provider,
    type: meta.type,
    priority: meta.priority,
    ...(meta.label === undefined ? {} : { label: meta.label }),
    status: meta.status,
    ...(meta.status_message === undefined ? {} : { status_message: meta.status_message }),
    ...(meta.expires_at === undefined ? {} : { expires_at: meta.expires_at }),
    quota: { limit: meta.quota.limit, used: meta.quota.used, remaining: meta.quota.remaining, period_start: meta.quota.period_start },
    created_at: meta.created_at,
    updated_at: meta.updated_at,
    revision: meta.revision,
  };
  const oauthSecrets = oauth && Object.keys(oauth.secrets).length > 0 ? oauth.secrets : undefined;
  if (key) {
    if (oauth) out.oauth = { flow: oauth.flow, params: oauth.params };
    const secrets: SecretFields = { token, ...(refresh_token === undefined ? {} : { refresh_token }) };
    if (oauthSecrets) secrets.oauth_secrets = oauthSecrets;
    const envelope: EncryptedEnvelope = sealSecrets(secrets, key, associatedData(meta.provider, meta.type, oauth?.flow));
    out.encryption = envelope;
  } else {
    if (oauth) out.oauth = { flow: oauth.flow, params: oauth.params, ...(oauthSecrets ? { secrets: oauthSecrets } : {}) };
    out.token = token;
    if (refresh_token !== undefined) out.refresh_token = refresh_token;
  }
  return `${JSON.stringify(out, null, 2)}\n`;
}

/** The key id of the file's `encryption` block; null for a plaintext or unparsable file. */
export function encryptedWith(text: string): string | null {
  try {
    const encryption = (JSON.parse(text) as { encryption?: { key_id?: unknown } }).encryption;
    return typeof encryption?.key_id === 'string' ? encryption.key_id : null;
  } catch {
    return null;
  }
}
