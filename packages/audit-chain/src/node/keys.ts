/**
 * @module keys
 * Ed25519 keys for checkpoints on `node:crypto`: generation, PEM files,
 * note signers and verifiers, and the C2SP verifier-key text form.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { AuditChainError } from '../core/errors.js';
import {
  assertValidKeyName,
  formatVerifierKeyWith,
  keyIdWith,
  type NoteSigner,
  type NoteVerifier,
  parseVerifierKeyWith,
} from '../core/note.js';
import { nodeHashSuite } from './nodeHashSuite.js';

/** A freshly generated key pair in the forms the CLI writes. */
export interface GeneratedKeyPair {
  name: string;
  /** PKCS#8 PEM: keep secret. */
  privateKeyPem: string;
  /** SPKI PEM. */
  publicKeyPem: string;
  /** C2SP verifier key `<name>+<keyid>+<key>`. */
  verifierKey: string;
}

/** Raw 32-byte Ed25519 public key of `key`. */
export function rawPublicKey(key: KeyObject): Uint8Array {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new AuditChainError('INVALID_KEY', 'only Ed25519 keys are supported');
  return new Uint8Array(Buffer.from(jwk.x, 'base64url'));
}

/**
 * Generates an Ed25519 key pair for signing checkpoints as `name`.
 *
 * @example
 * ```ts
 * const keys = generateCheckpointKeys('audit.example.com');
 * ```
 */
export function generateCheckpointKeys(name: string): GeneratedKeyPair {
  assertValidKeyName(name);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    name,
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    verifierKey: formatVerifierKeyWith(nodeHashSuite, name, rawPublicKey(publicKey)),
  };
}

function toPrivateKey(key: string | KeyObject): KeyObject {
  try {
    return typeof key === 'string' ? createPrivateKey(key) : key;
  } catch (error) {
    throw new AuditChainError('INVALID_KEY', 'could not read the private key (expected Ed25519 PKCS#8 PEM)', { cause: error });
  }
}

/** A note signer for `name` from an Ed25519 private key (PEM or KeyObject). */
export function createNoteSigner(name: string, privateKey: string | KeyObject): NoteSigner {
  const key = toPrivateKey(privateKey);
  const publicKey = rawPublicKey(createPublicKey(key));
  return {
    name,
    keyId: keyIdWith(nodeHashSuite, name, publicKey),
    sign: (message) => new Uint8Array(sign(null, message, key)),
  };
}

/**
 * A note verifier from an Ed25519 public key: a C2SP verifier key string,
 * or PEM (SPKI) together with the signer's `name`.
 */
export function createNoteVerifier(key: string | KeyObject, name?: string): NoteVerifier {
  if (typeof key === 'string' && !key.includes('-----BEGIN')) {
    const parsed = parseVerifierKeyWith(nodeHashSuite, key);
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(parsed.publicKey).toString('base64url') },
      format: 'jwk',
    });
    return { name: parsed.name, keyId: parsed.keyId, verify: (message, signature) => safeVerify(publicKey, message, signature) };
  }
  if (name === undefined) throw new AuditChainError('INVALID_KEY', 'a PEM public key needs the signer name');
  let publicKey: KeyObject;
  try {
    publicKey = typeof key === 'string' ? createPublicKey(key) : key;
  } catch (error) {
    throw new AuditChainError('INVALID_KEY', 'could not read the public key (expected Ed25519 SPKI PEM)', { cause: error });
  }
  return {
    name,
    keyId: keyIdWith(nodeHashSuite, name, rawPublicKey(publicKey)),
    verify: (message, signature) => safeVerify(publicKey, message, signature),
  };
}

function safeVerify(key: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}
