/**
 * @module encryption
 * Encryption at rest for credential secrets: AES-256-GCM with a 32-byte key,
 * a fresh 96-bit nonce per write, and additional authenticated data that
 * binds the ciphertext to the record's non-secret identity (provider, type,
 * flow). Rebinding a token to another provider, whose base URL would then
 * receive it, fails authentication like any other tampering.
 *
 * Keys carry a short public id (a hash of the key), written next to the
 * ciphertext, so a reader with several keys (during a rekey) knows which
 * one to use and a reader with the wrong key says so instead of guessing.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { CredentialsError } from './errors.js';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * A 32-byte AES key. The bytes stay private: printing, logging or
 * serializing the key shows only its id.
 *
 * @example
 * ```ts
 * const key = parseEncryptionKey(process.env.SWITCHYARD_AUTH_KEY!);
 * console.log(`${key}`); // EncryptionKey(3f9a61c2d0b4e877)
 * ```
 */
export class EncryptionKey {
  /** Public id: the first 16 hex digits of SHA-256 over a domain tag and the key. */
  readonly id: string;
  readonly #bytes: Buffer;

  constructor(bytes: Uint8Array) {
    if (bytes.length !== KEY_BYTES) {
      throw new CredentialsError('invalid_key', `an encryption key must be ${KEY_BYTES} bytes, not ${bytes.length}`, { field: 'key' });
    }
    this.#bytes = Buffer.from(bytes);
    this.id = createHash('sha256').update('switchyard/credentials/key-id/v1\n').update(this.#bytes).digest('hex').slice(0, 16);
  }

  /** @internal The key bytes, for the cipher. */
  bytes(): Buffer {
    return this.#bytes;
  }

  toString(): string {
    return `EncryptionKey(${this.id})`;
  }

  toJSON(): { key_id: string } {
    return { key_id: this.id };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/**
 * Reads a key given as 64 hex digits or as base64 / base64url (padded or
 * not) of exactly 32 bytes. The error never repeats the input.
 *
 * @example
 * ```ts
 * const key = parseEncryptionKey('q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=');
 * ```
 */
export function parseEncryptionKey(text: string): EncryptionKey {
  const trimmed = typeof text === 'string' ? text.trim() : '';
  let bytes: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) bytes = Buffer.from(trimmed, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) bytes = Buffer.from(trimmed.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
  if (!bytes || bytes.length !== KEY_BYTES) {
    throw new CredentialsError(
      'invalid_key',
      `auth.encryption.key must be ${KEY_BYTES} bytes written as 64 hex digits or 44 base64 characters (got ${trimmed.length} characters)`,
      { field: 'auth.encryption.key' },
    );
  }
  return new EncryptionKey(bytes);
}

/**
 * A new random key, base64-encoded, for `auth.encryption.key`.
 *
 * @example
 * ```ts
 * console.log(generateEncryptionKey()); // e.g. 'yV3o…=' (44 characters)
 * ```
 */
export function generateEncryptionKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

/** The encrypted part of a record, as written to disk. All binary fields are base64. */
export interface EncryptedEnvelope {
  algorithm: typeof ALGORITHM;
  key_id: string;
  nonce: string;
  tag: string;
  ciphertext: string;
}

/**
 * Encrypts `secrets` (any JSON value) under `key`, bound to `associatedData`.
 *
 * @example
 * ```ts
 * const envelope = sealSecrets({ token: 'sk-…' }, key, 'openai|api_key');
 * openSecrets(envelope, [key], 'openai|api_key'); // { token: 'sk-…' }
 * ```
 */
export function sealSecrets(secrets: unknown, key: EncryptionKey, associatedData: string): EncryptedEnvelope {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(ALGORITHM, key.bytes(), nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
  return {
    algorithm: ALGORITHM,
    key_id: key.id,
    nonce: nonce.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ciphertext: ciphertext.toString('base64'),
  };
}

/**
 * Decrypts an envelope with whichever of `keys` it names. Throws
 * `decryption_failed` when no key matches, when the data or the associated
 * data was changed, or when the envelope is malformed; never returns
 * garbage.
 */
export function openSecrets(envelope: unknown, keys: readonly EncryptionKey[], associatedData: string): unknown {
  const parts = readEnvelope(envelope);
  const key = keys.find((k) => k.id === parts.keyId);
  if (!key) {
    const known = keys.length === 0 ? 'no key is configured' : `the configured key is ${keys.map((k) => k.id).join(', ')}`;
    throw new CredentialsError('decryption_failed', `encrypted with key ${parts.keyId}, but ${known}: wrong key`);
  }
  let plaintext: string;
  try {
    const decipher = createDecipheriv(ALGORITHM, key.bytes(), parts.nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(parts.tag);
    plaintext = Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]).toString('utf8');
  } catch (cause) {
    throw new CredentialsError('decryption_failed', 'authentication failed: the encrypted data or its metadata was modified', { cause });
  }
  try {
    return JSON.parse(plaintext);
  } catch (cause) {
    // Only reachable with a forged tag, which GCM makes infeasible; still never hand back garbage.
    throw new CredentialsError('decryption_failed', 'decrypted data is not JSON', { cause });
  }
}

function readEnvelope(envelope: unknown): { keyId: string; nonce: Buffer; tag: Buffer; ciphertext: Buffer } {
  const fail = (what: string): never => {
    throw new CredentialsError('decryption_failed', `malformed encryption block: ${what}`, { field: 'encryption' });
  };
  if (typeof envelope !== 'object' || envelope === null) return fail('not an object');
  const e = envelope as Record<string, unknown>;
  if (e.algorithm !== ALGORITHM) return fail(`algorithm must be "${ALGORITHM}"`);
  if (typeof e.key_id !== 'string' || !/^[0-9a-f]{16}$/.test(e.key_id)) return fail('key_id must be 16 hex digits');
  const nonce = decodeBase64(e.nonce) ?? fail('nonce is not base64');
  const tag = decodeBase64(e.tag) ?? fail('tag is not base64');
  const ciphertext = decodeBase64(e.ciphertext) ?? fail('ciphertext is not base64');
  if (nonce.length !== NONCE_BYTES) fail(`nonce must be ${NONCE_BYTES} bytes`);
  if (tag.length !== TAG_BYTES) fail(`tag must be ${TAG_BYTES} bytes`);
  return { keyId: e.key_id, nonce, tag, ciphertext };
}

function decodeBase64(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) return undefined;
  return Buffer.from(value, 'base64');
}
