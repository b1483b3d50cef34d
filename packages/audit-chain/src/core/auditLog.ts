/**
 * @module auditLog
 * `AuditLog`: the writer's view of one log. It seals entries inside the
 * store's exclusion, keeps a Merkle tree in step with the store for proofs
 * and checkpoints, and verifies what the store holds.
 */
import type { AuditStore, ChainHead } from './auditStore.js';
import { fromHex, toHex } from './bytes.js';
import { type AuditEntry, assertValidOrigin, type EntryFields, genesisHashWith, type SealedEntry, sealEntryWith } from './entry.js';
import { AuditChainError } from './errors.js';
import type { HashSuite } from './hashSuite.js';
import { type ConsistencyProof, type InclusionProof, MerkleTree } from './merkle.js';
import { type Checkpoint, formatCheckpoint, type NoteSigner, signNote } from './note.js';
import type { VerificationResult } from './result.js';
import { type VerifyChainOptions, verifyChainWith } from './verify.js';

/** Where signed checkpoints are kept (a sidecar file, a table, memory). */
export interface CheckpointStore {
  save(checkpoint: Checkpoint, note: string): Promise<void>;
  /** The most recent checkpoint, or undefined. */
  latest(): Promise<{ checkpoint: Checkpoint; note: string } | undefined>;
}

/** A checkpoint store in memory. */
export class MemoryCheckpointStore implements CheckpointStore {
  private readonly saved: { checkpoint: Checkpoint; note: string }[] = [];

  async save(checkpoint: Checkpoint, note: string): Promise<void> {
    this.saved.push({ checkpoint, note });
  }

  async latest(): Promise<{ checkpoint: Checkpoint; note: string } | undefined> {
    return this.saved[this.saved.length - 1];
  }
}

/** Options of `AuditLog`. */
export interface AuditLogOptions {
  /** Names the log; bound into entry 1 and every checkpoint. */
  origin: string;
  /** Source of timestamps for entries that bring none. */
  now?: () => Date;
  /** Where `checkpoint()` keeps the notes it signs. */
  checkpoints?: CheckpointStore;
}

/** The head of a log with its Merkle root. */
export interface LogHead extends ChainHead {
  /** Hex RFC 6962 root over all entries. */
  root: string;
}

/** The log implementation over a given hash suite; import `AuditLog` from the package entry instead. */
export class AuditLogCore {
  readonly origin: string;
  private readonly store: AuditStore;
  private readonly suite: HashSuite;
  private readonly now: () => Date;
  private readonly checkpoints: CheckpointStore | undefined;
  private readonly genesis: string;
  private readonly tree: MerkleTree;
  private treeSync: Promise<void> = Promise.resolve();

  constructor(suite: HashSuite, store: AuditStore, options: AuditLogOptions) {
    assertValidOrigin(options.origin);
    this.suite = suite;
    this.store = store;
    this.origin = options.origin;
    this.now = options.now ?? (() => new Date());
    this.checkpoints = options.checkpoints;
    this.genesis = genesisHashWith(suite, options.origin);
    this.tree = new MerkleTree(suite);
  }

  /** Appends one entry; resolves once the store has it durably. */
  async append(fields: EntryFields): Promise<AuditEntry> {
    const [entry] = await this.appendMany([fields]);
    return entry!;
  }

  /** Appends several entries atomically, in order. */
  async appendMany(fieldsList: readonly EntryFields[]): Promise<AuditEntry[]> {
    if (fieldsList.length === 0) return [];
    const timestamp = this.now().toISOString();
    const sealed = await this.store.append((head) => this.seal(head, fieldsList, timestamp));
    this.extendTree(sealed);
    return sealed.map((s) => s.entry);
  }

  /**
   * Seals entries after `head` without storing them. SQL adapters call this
   * inside their own transaction, next to the state change it records.
   */
  seal(head: ChainHead, fieldsList: readonly EntryFields[], timestamp: string = this.now().toISOString()): SealedEntry[] {
    const out: SealedEntry[] = [];
    let prevHash = head.hash ?? this.genesis;
    let id = head.size;
    for (const fields of fieldsList) {
      const sealed = sealEntryWith(this.suite, { id: ++id, prevHash, timestamp, fields });
      out.push(sealed);
      prevHash = sealed.entry.hash;
    }
    return out;
  }

  /** Current size, last hash and root. */
  async head(): Promise<LogHead> {
    await this.syncTree();
    const size = this.tree.size;
    return { size, hash: size === 0 ? null : toHex(this.tree.leaf(size - 1)), root: toHex(this.tree.root()) };
  }

  /** Signs a checkpoint of the current head and saves it when a checkpoint store is configured. */
  async checkpoint(signers: NoteSigner | readonly NoteSigner[]): Promise<string> {
    await this.syncTree();
    const checkpoint: Checkpoint = { origin: this.origin, size: this.tree.size, root: toHex(this.tree.root()), extensions: [] };
    const note = await signNote(formatCheckpoint(checkpoint), Array.isArray(signers) ? signers : [signers as NoteSigner]);
    await this.checkpoints?.save(checkpoint, note);
    return note;
  }

  /** Proof that the entry at `leafIndex` (id − 1) is in the tree of the first `treeSize` entries. */
  async proveInclusion(leafIndex: number, treeSize?: number): Promise<InclusionProof> {
    await this.syncTree();
    const size = treeSize ?? this.tree.size;
    const path = this.tree.inclusionProof(leafIndex, size);
    return {
      leaf_index: leafIndex,
      tree_size: size,
      leaf_hash: toHex(this.tree.leaf(leafIndex)),
      audit_path: path.map(toHex),
      root: toHex(this.tree.root(size)),
    };
  }

  /** Proof that the tree of the first `first` entries is a prefix of the tree of the first `second`. */
  async proveConsistency(first: number, second?: number): Promise<ConsistencyProof> {
    await this.syncTree();
    const to = second ?? this.tree.size;
    const proof = this.tree.consistencyProof(first, to);
    return {
      first_size: first,
      second_size: to,
      first_root: toHex(this.tree.root(first)),
      second_root: toHex(this.tree.root(to)),
      proof: proof.map(toHex),
    };
  }

  /** Verifies everything the store holds, against this log's origin. */
  async verify(options: Omit<VerifyChainOptions, 'origin'> = {}): Promise<VerificationResult> {
    const source = this.store.lines ? this.store.lines() : this.store.read();
    return verifyChainWith(this.suite, source as AsyncIterable<string | Record<string, unknown>>, { ...options, origin: this.origin });
  }

  /** Brings the in-memory tree up to the store's head; serialized so concurrent callers share one pass. */
  private syncTree(): Promise<void> {
    const run = this.treeSync.then(async () => {
      for await (const entry of this.store.read({ fromId: this.tree.size + 1 })) {
        if (entry.id !== this.tree.size + 1) {
          throw new AuditChainError('STORE_FAILED', `store returned entry ${entry.id} where ${this.tree.size + 1} was expected`);
        }
        this.tree.append(fromHex(entry.hash));
      }
    });
    // A failed pass must not poison later ones: the next caller retries from the tree's size.
    this.treeSync = run.catch(() => undefined);
    return run;
  }

  /** Adds freshly stored entries to the tree when it is in step, saving a read of the store. */
  private extendTree(sealed: readonly SealedEntry[]): void {
    this.treeSync = this.treeSync.then(() => {
      const first = sealed[0];
      if (first && first.entry.id === this.tree.size + 1) for (const s of sealed) this.tree.append(fromHex(s.entry.hash));
    });
  }

  /**
   * Checks that the stored log was started under this log's origin (entry 1
   * links to its genesis hash). Appending to a log under the wrong origin
   * would produce a chain no verifier accepts.
   */
  async assertOrigin(): Promise<void> {
    for await (const entry of this.store.read({ fromId: 1, toId: 1 })) {
      if (entry.prev_hash !== this.genesis) {
        throw new AuditChainError('INVALID_ORIGIN', `the log was not started under origin ${JSON.stringify(this.origin)}`);
      }
    }
  }
}
