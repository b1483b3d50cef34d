/**
 * @module note
 * C2SP signed notes (https://c2sp.org/signed-note) and the checkpoint body
 * they carry (https://c2sp.org/tlog-checkpoint). Only Ed25519 keys (type
 * 0x01) are produced; unknown signatures are skipped, as the spec requires.
 */
import { bytesEqual, concatBytes, fromBase64, fromHex, toBase64, toHex, utf8 } from './bytes.js';
import { AuditChainError } from './errors.js';
import type { HashSuite } from './hashSuite.js';

/** The em dash and space that open every signature line. */
export const SIGNATURE_PREFIX = '\u2014 ';
/** Signature type byte of Ed25519 keys in C2SP signed notes. */
export const ED25519_KEY_TYPE = 0x01;

/** A checkpoint: the log's name, its size and its root. */
export interface Checkpoint {
  origin: string;
  size: number;
  /** Hex root hash. */
  root: string;
  /** Optional extension lines after the root (kept, never interpreted). */
  extensions: string[];
}

/** One signature line of a note. */
export interface NoteSignature {
  name: string;
  /** First 4 bytes of the key hash. */
  keyId: Uint8Array;
  signature: Uint8Array;
}

/** A parsed signed note. */
export interface SignedNote {
  /** The signed text, ending with a newline. */
  text: string;
  signatures: NoteSignature[];
}

/** A public key able to check signatures of one signer. */
export interface NoteVerifier {
  name: string;
  keyId: Uint8Array;
  verify(message: Uint8Array, signature: Uint8Array): boolean | Promise<boolean>;
}

const NAME_PATTERN = /^[^\s+]+$/u;

/** Checks a key name: non-empty, no whitespace, no '+'. */
export function assertValidKeyName(name: string): void {
  if (!NAME_PATTERN.test(name)) {
    throw new AuditChainError('INVALID_KEY', `key name ${JSON.stringify(name)} must be non-empty with no spaces or '+'`);
  }
}

/** keyid = SHA-256(name || 0x0A || 0x01 || public key)[:4]. */
export function keyIdWith(suite: HashSuite, name: string, publicKey: Uint8Array): Uint8Array {
  assertValidKeyName(name);
  return suite.digest(concatBytes(utf8(name), new Uint8Array([0x0a, ED25519_KEY_TYPE]), publicKey)).slice(0, 4);
}

/** Formats the checkpoint body: `<origin>\n<size>\n<base64 root>\n`. */
export function formatCheckpoint(checkpoint: Pick<Checkpoint, 'origin' | 'size' | 'root'> & { extensions?: string[] }): string {
  const extensions = checkpoint.extensions ?? [];
  return `${checkpoint.origin}\n${checkpoint.size}\n${toBase64(fromHex(checkpoint.root))}\n${extensions.map((line) => `${line}\n`).join('')}`;
}

/** Parses a checkpoint body; throws `INVALID_NOTE` when it is malformed. */
export function parseCheckpoint(text: string): Checkpoint {
  if (!text.endsWith('\n')) throw new AuditChainError('INVALID_NOTE', 'checkpoint text must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new AuditChainError('INVALID_NOTE', 'checkpoint needs origin, size and root lines');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin.length === 0) throw new AuditChainError('INVALID_NOTE', 'checkpoint origin is empty');
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) {
    throw new AuditChainError('INVALID_NOTE', `checkpoint size ${JSON.stringify(sizeText)} is not a decimal integer`);
  }
  let root: Uint8Array;
  try {
    root = fromBase64(rootText);
  } catch (error) {
    throw new AuditChainError('INVALID_NOTE', 'checkpoint root is not base64', { cause: error });
  }
  if (root.length !== 32) throw new AuditChainError('INVALID_NOTE', 'checkpoint root is not 32 bytes');
  if (extensions.some((line) => line.length === 0)) throw new AuditChainError('INVALID_NOTE', 'checkpoint has an empty extension line');
  return { origin, size: Number(sizeText), root: toHex(root), extensions };
}

/** Parses a signed note into its text and signature lines. */
export function parseSignedNote(note: string): SignedNote {
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new AuditChainError('INVALID_NOTE', 'a signed note needs a blank line before its signatures');
  const text = note.slice(0, split + 1);
  const signatureBlock = note.slice(split + 2);
  if (!signatureBlock.endsWith('\n')) throw new AuditChainError('INVALID_NOTE', 'the last signature line must end with a newline');
  // Control characters other than newline are forbidden in note text.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the spec forbids exactly these
  if (/[\u0000-\u0009\u000b-\u001f\u007f]/.test(text)) throw new AuditChainError('INVALID_NOTE', 'note text contains control characters');
  const signatures: NoteSignature[] = [];
  for (const line of signatureBlock.slice(0, -1).split('\n')) {
    if (!line.startsWith(SIGNATURE_PREFIX)) throw new AuditChainError('INVALID_NOTE', `malformed signature line ${JSON.stringify(line)}`);
    const rest = line.slice(SIGNATURE_PREFIX.length);
    const space = rest.lastIndexOf(' ');
    if (space <= 0) throw new AuditChainError('INVALID_NOTE', `malformed signature line ${JSON.stringify(line)}`);
    const name = rest.slice(0, space);
    let blob: Uint8Array;
    try {
      blob = fromBase64(rest.slice(space + 1));
    } catch (error) {
      throw new AuditChainError('INVALID_NOTE', `signature of ${name} is not base64`, { cause: error });
    }
    if (blob.length < 5 || !NAME_PATTERN.test(name))
      throw new AuditChainError('INVALID_NOTE', `malformed signature line ${JSON.stringify(line)}`);
    signatures.push({ name, keyId: blob.slice(0, 4), signature: blob.slice(4) });
  }
  if (signatures.length === 0) throw new AuditChainError('INVALID_NOTE', 'a signed note needs at least one signature');
  return { text, signatures };
}

/** Formats a signed note: text, a blank line, then one line per signature. */
export function formatSignedNote(text: string, signatures: readonly NoteSignature[]): string {
  const lines = signatures.map((s) => `${SIGNATURE_PREFIX}${s.name} ${toBase64(concatBytes(s.keyId, s.signature))}\n`);
  return `${text}\n${lines.join('')}`;
}

/** The outcome of checking a note's signatures. */
export interface NoteCheck {
  /** Names of trusted keys whose signatures verified. */
  verifiedBy: string[];
  /** Names of trusted keys whose signatures did not verify. */
  failedBy: string[];
}

/** Checks every signature made by one of `verifiers`; others are skipped as unknown. */
export async function checkNoteSignatures(note: SignedNote, verifiers: readonly NoteVerifier[]): Promise<NoteCheck> {
  const message = utf8(note.text);
  const verifiedBy: string[] = [];
  const failedBy: string[] = [];
  for (const signature of note.signatures) {
    const verifier = verifiers.find((v) => v.name === signature.name && bytesEqual(v.keyId, signature.keyId));
    if (!verifier) continue;
    ((await verifier.verify(message, signature.signature)) ? verifiedBy : failedBy).push(verifier.name);
  }
  return { verifiedBy, failedBy };
}

/** A verifier key in the C2SP text form `<name>+<hex keyid>+<base64(0x01 || key)>`. */
export interface ParsedVerifierKey {
  name: string;
  keyId: Uint8Array;
  publicKey: Uint8Array;
}

/** Parses a `<name>+<keyid>+<key>` verifier key and checks its key id. */
export function parseVerifierKeyWith(suite: HashSuite, text: string): ParsedVerifierKey {
  // The base64 key may itself contain '+', so split only at the first two.
  const trimmed = text.trim();
  const first = trimmed.indexOf('+');
  const second = trimmed.indexOf('+', first + 1);
  if (first <= 0 || second < 0) throw new AuditChainError('INVALID_KEY', 'a verifier key has the form <name>+<hex keyid>+<base64 key>');
  const name = trimmed.slice(0, first);
  const keyIdHex = trimmed.slice(first + 1, second);
  const keyB64 = trimmed.slice(second + 1);
  assertValidKeyName(name);
  let blob: Uint8Array;
  let keyId: Uint8Array;
  try {
    blob = fromBase64(keyB64);
    keyId = fromHex(keyIdHex);
  } catch (error) {
    throw new AuditChainError('INVALID_KEY', 'verifier key has a malformed key id or key', { cause: error });
  }
  if (blob.length !== 33 || blob[0] !== ED25519_KEY_TYPE || keyId.length !== 4) {
    throw new AuditChainError('INVALID_KEY', 'only Ed25519 verifier keys (type 0x01, 32 bytes) are supported');
  }
  const publicKey = blob.slice(1);
  if (!bytesEqual(keyId, keyIdWith(suite, name, publicKey)))
    throw new AuditChainError('INVALID_KEY', 'verifier key id does not match its key');
  return { name, keyId, publicKey };
}

/** Formats a verifier key as `<name>+<hex keyid>+<base64(0x01 || key)>`. */
export function formatVerifierKeyWith(suite: HashSuite, name: string, publicKey: Uint8Array): string {
  const keyId = keyIdWith(suite, name, publicKey);
  return `${name}+${toHex(keyId)}+${toBase64(concatBytes(new Uint8Array([ED25519_KEY_TYPE]), publicKey))}`;
}

/** A private key able to sign notes as one signer. */
export interface NoteSigner {
  name: string;
  keyId: Uint8Array;
  sign(message: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

/** Signs `text` (which must end with a newline) with every signer. */
export async function signNote(text: string, signers: readonly NoteSigner[]): Promise<string> {
  if (!text.endsWith('\n')) throw new AuditChainError('INVALID_NOTE', 'note text must end with a newline');
  if (signers.length === 0) throw new AuditChainError('INVALID_ARGUMENT', 'at least one signer is needed');
  const message = utf8(text);
  const signatures: NoteSignature[] = [];
  for (const signer of signers) {
    signatures.push({ name: signer.name, keyId: signer.keyId, signature: await signer.sign(message) });
  }
  return formatSignedNote(text, signatures);
}
