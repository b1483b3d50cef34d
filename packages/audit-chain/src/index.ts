/**
 * @module @switchyard/audit-chain
 * A tamper-evident, append-only log: RFC 8785 canonical entries in a SHA-256
 * hash chain that is also an RFC 6962 Merkle tree, with inclusion and
 * consistency proofs, C2SP signed checkpoints, and a streaming verifier.
 * This entry point runs on Node (`node:crypto`, `node:fs`); the `/web`
 * subpath verifies in browsers.
 */

import { type AgilePlusHashInput, agilePlusHashWith } from './core/agileplus.js';
import { AuditLogCore, type AuditLogOptions } from './core/auditLog.js';
import type { AuditStore } from './core/auditStore.js';
import { fromHex, toHex } from './core/bytes.js';
import { ChainVerifier, type ChainVerifierOptions } from './core/chainVerifier.js';
import { genesisHashWith, type SealedEntry, type SealInput, sealEntryWith } from './core/entry.js';
import {
  type ConsistencyProof,
  type InclusionProof,
  MerkleTree as MerkleTreeCore,
  merkleRootWith,
  verifyConsistencyProofWith,
  verifyInclusionProofWith,
} from './core/merkle.js';
import type { VerificationResult } from './core/result.js';
import {
  type ChainSource,
  type CheckpointVerification,
  type VerifyChainOptions,
  type VerifyCheckpointOptions,
  verifyChainWith,
  verifyCheckpointWith,
} from './core/verify.js';
import { nodeHashSuite } from './node/nodeHashSuite.js';

export { AGILEPLUS_GENESIS, type AgilePlusHashInput } from './core/agileplus.js';
export { type AuditLogOptions, type CheckpointStore, type LogHead, MemoryCheckpointStore } from './core/auditLog.js';
export { type AuditStore, type ChainHead, type EntryBuilder, MemoryAuditStore } from './core/auditStore.js';
export { canonicalize, type JsonObject, type JsonValue } from './core/canonicalize.js';
export type { ChainVerifierOptions, VerifyMode } from './core/chainVerifier.js';
export type { AuditEntry, EntryFields, SealedEntry, SealInput } from './core/entry.js';
export { GENESIS_DOMAIN, isRfc3339, RESERVED_FIELDS } from './core/entry.js';
export { AuditChainError, type AuditChainErrorCode } from './core/errors.js';
export type { ConsistencyProof, InclusionProof } from './core/merkle.js';
export {
  type Checkpoint,
  formatCheckpoint,
  formatSignedNote,
  type NoteSignature,
  type NoteSigner,
  type NoteVerifier,
  parseCheckpoint,
  parseSignedNote,
  type SignedNote,
  signNote,
} from './core/note.js';
export { SCHEMES, type Scheme, type TrustedState, type VerificationResult, type VerifyErrorCode } from './core/result.js';
export type { ChainSource, CheckpointVerification, VerifyChainOptions, VerifyCheckpointOptions } from './core/verify.js';
export { checkpointSidecarPath, FileCheckpointStore, type SavedCheckpoint } from './node/fileCheckpointStore.js';
export {
  acquireFileLock,
  currentProcessIdentity,
  type FileLockOptions,
  isProcessGone,
  type ProcessIdentity,
  parseProcessIdentity,
  processIdentity,
  type ReleaseLock,
} from './node/fileLock.js';
export { JsonlAuditStore, type JsonlAuditStoreOptions } from './node/jsonlAuditStore.js';
export { createNoteSigner, createNoteVerifier, type GeneratedKeyPair, generateCheckpointKeys } from './node/keys.js';
export { type RepairResult, repairJsonlFile } from './node/repair.js';
export { verifyFile, verifyJsonl } from './node/verifyFile.js';

/**
 * An append-only audit log over an {@link AuditStore}.
 *
 * @example
 * ```ts
 * const log = new AuditLog(new MemoryAuditStore(), { origin: 'example.com/app' });
 * const entry = await log.append({ actor: 'alice', action: 'deploy' });
 * const proof = await log.proveInclusion(entry.id - 1);
 * verifyInclusion(proof); // true
 * ```
 */
export class AuditLog extends AuditLogCore {
  constructor(store: AuditStore, options: AuditLogOptions) {
    super(nodeHashSuite, store, options);
  }
}

/** An RFC 6962 Merkle tree that keeps complete subtrees for O(log n) proofs. */
export class MerkleTree extends MerkleTreeCore {
  constructor() {
    super(nodeHashSuite);
  }
}

/** A streaming chain verifier; see {@link verifyChain} for the usual entry point. */
export class StreamingVerifier extends ChainVerifier {
  constructor(options: ChainVerifierOptions = {}) {
    super(nodeHashSuite, options);
  }
}

/**
 * `prev_hash` of entry 1 of the log named `origin`.
 *
 * @example
 * ```ts
 * genesisHash('workflow:my-repo/001-login');
 * ```
 */
export function genesisHash(origin: string): string {
  return genesisHashWith(nodeHashSuite, origin);
}

/** Seals one entry (fills `id`, `timestamp`, `prev_hash`, `hash`); for stores that append inside their own transaction. */
export function sealEntry(input: SealInput): SealedEntry {
  return sealEntryWith(nodeHashSuite, input);
}

/**
 * Verifies a chain given as stored lines or parsed entries, sync or async.
 *
 * @example
 * ```ts
 * const result = await verifyChain(lines, { origin: 'example.com/app' });
 * ```
 */
export function verifyChain(source: ChainSource, options: VerifyChainOptions = {}): Promise<VerificationResult> {
  return verifyChainWith(nodeHashSuite, source, options);
}

/** Verifies a signed checkpoint on its own (signatures, origin, rollback, fork). */
export function verifyCheckpoint(note: string, options: VerifyCheckpointOptions): Promise<CheckpointVerification> {
  return verifyCheckpointWith(nodeHashSuite, note, options);
}

/**
 * Checks an inclusion proof; `root` defaults to the proof's own `root`.
 *
 * @example
 * ```ts
 * verifyInclusion(await log.proveInclusion(41), trustedRoot);
 * ```
 */
export function verifyInclusion(proof: InclusionProof, root?: string): boolean {
  return verifyInclusionProofWith(nodeHashSuite, proof, root);
}

/** Checks a consistency proof; the roots default to the proof's own. */
export function verifyConsistency(proof: ConsistencyProof, firstRoot?: string, secondRoot?: string): boolean {
  return verifyConsistencyProofWith(nodeHashSuite, proof, firstRoot, secondRoot);
}

/**
 * RFC 6962 root (hex) of leaf hashes given as hex strings or bytes.
 *
 * @example
 * ```ts
 * merkleRoot([]); // 'e3b0c442…' (SHA-256 of nothing)
 * ```
 */
export function merkleRoot(leaves: Iterable<string | Uint8Array>): string {
  function* bytes(): Iterable<Uint8Array> {
    for (const leaf of leaves) yield typeof leaf === 'string' ? fromHex(leaf) : leaf;
  }
  return toHex(merkleRootWith(nodeHashSuite, bytes()));
}

/** The hash an AgilePlus entry must carry (scheme `agileplus-v1`). */
export function agilePlusHash(input: AgilePlusHashInput): string {
  return agilePlusHashWith(nodeHashSuite, input);
}
