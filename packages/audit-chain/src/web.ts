/**
 * @module @switchyard/audit-chain/web
 * The verifier for browsers and other runtimes without `node:crypto`:
 * chains, proofs and checkpoints, on a pure-JS SHA-256 and WebCrypto
 * Ed25519. Same results, same codes as the Node entry point.
 */
import { fromHex, toHex } from './core/bytes.js';
import { canonicalize } from './core/canonicalize.js';
import { genesisHashWith } from './core/entry.js';
import { portableHashSuite } from './core/hashSuite.js';
import {
  type ConsistencyProof,
  type InclusionProof,
  merkleRootWith,
  verifyConsistencyProofWith,
  verifyInclusionProofWith,
} from './core/merkle.js';
import { type NoteVerifier, parseVerifierKeyWith } from './core/note.js';
import type { VerificationResult } from './core/result.js';
import {
  type ChainSource,
  type CheckpointVerification,
  type VerifyChainOptions,
  type VerifyCheckpointOptions,
  verifyChainWith,
  verifyCheckpointWith,
  verifyJsonlWith,
} from './core/verify.js';

export { AuditChainError } from './core/errors.js';
export type { ConsistencyProof, InclusionProof } from './core/merkle.js';
export type { Checkpoint, NoteVerifier } from './core/note.js';
export type { Scheme, TrustedState, VerificationResult, VerifyErrorCode } from './core/result.js';
export type { ChainSource, CheckpointVerification, VerifyChainOptions, VerifyCheckpointOptions } from './core/verify.js';
export { canonicalize };

/** `prev_hash` of entry 1 of the log named `origin`. */
export function genesisHash(origin: string): string {
  return genesisHashWith(portableHashSuite, origin);
}

/**
 * Verifies a chain of stored lines or parsed entries. For a log's bytes use
 * {@link verifyJsonl}: splitting a decoded text yourself would miss a torn
 * last line and bytes that are not UTF-8.
 *
 * @example
 * ```ts
 * const result = await verifyChain(entriesFromMyApi, { origin: 'example.com/app' });
 * ```
 */
export function verifyChain(source: ChainSource, options: VerifyChainOptions = {}): Promise<VerificationResult> {
  return verifyChainWith(portableHashSuite, source, options);
}

/**
 * Verifies JSONL bytes as they arrive (a `fetch` body, any async iterable of
 * bytes): the same checks, codes and positions as `verifyFile` on Node,
 * including a torn last line and a line that is not UTF-8.
 *
 * @example
 * ```ts
 * const response = await fetch('/audit.jsonl');
 * const result = await verifyJsonl(response.body!, { origin: 'example.com/app' });
 * ```
 */
export function verifyJsonl(chunks: AsyncIterable<Uint8Array | string>, options: VerifyChainOptions = {}): Promise<VerificationResult> {
  return verifyJsonlWith(portableHashSuite, chunks, options);
}

/** Verifies a signed checkpoint on its own. */
export function verifyCheckpoint(note: string, options: VerifyCheckpointOptions): Promise<CheckpointVerification> {
  return verifyCheckpointWith(portableHashSuite, note, options);
}

/** Checks an inclusion proof. */
export function verifyInclusion(proof: InclusionProof, root?: string): boolean {
  return verifyInclusionProofWith(portableHashSuite, proof, root);
}

/** Checks a consistency proof. */
export function verifyConsistency(proof: ConsistencyProof, firstRoot?: string, secondRoot?: string): boolean {
  return verifyConsistencyProofWith(portableHashSuite, proof, firstRoot, secondRoot);
}

/** RFC 6962 root (hex) of leaf hashes. */
export function merkleRoot(leaves: Iterable<string | Uint8Array>): string {
  const bytes = [...leaves].map((leaf) => (typeof leaf === 'string' ? fromHex(leaf) : leaf));
  return toHex(merkleRootWith(portableHashSuite, bytes));
}

/**
 * A checkpoint verifier from a C2SP verifier key (`<name>+<keyid>+<key>`),
 * checking Ed25519 signatures with WebCrypto.
 *
 * @example
 * ```ts
 * const verifier = noteVerifierFromKey('audit.example.com+1a2b3c4d+AQ...');
 * await verifyCheckpoint(note, { verifiers: [verifier] });
 * ```
 */
export function noteVerifierFromKey(verifierKey: string): NoteVerifier {
  const parsed = parseVerifierKeyWith(portableHashSuite, verifierKey);
  let imported: ReturnType<typeof crypto.subtle.importKey> | undefined;
  return {
    name: parsed.name,
    keyId: parsed.keyId,
    async verify(message, signature) {
      imported ??= crypto.subtle.importKey('raw', parsed.publicKey, { name: 'Ed25519' }, false, ['verify']);
      try {
        return await crypto.subtle.verify({ name: 'Ed25519' }, await imported, signature, message);
      } catch {
        return false;
      }
    },
  };
}
