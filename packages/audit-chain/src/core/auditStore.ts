/**
 * @module auditStore
 * The `AuditStore` port: where a log's entries live. The store owns the
 * authoritative head, so the sealing of new entries happens inside its
 * exclusion (a lock, a transaction): two writers can never fork the chain.
 */
import type { AuditEntry, SealedEntry } from './entry.js';
import { AuditChainError } from './errors.js';

/** The last entry of a log. */
export interface ChainHead {
  /** Number of entries (= id of the last entry). */
  size: number;
  /** `hash` of the last entry, or `null` for an empty log. */
  hash: string | null;
}

/** Builds the entries to append from the authoritative head. Must be pure: a store may call it again after a conflict. */
export type EntryBuilder = (head: ChainHead) => SealedEntry[];

/**
 * Port for audit log storage. Adapters: {@link MemoryAuditStore}, the JSONL
 * file store (`JsonlAuditStore`), and the workflow's SQL stores, which keep
 * entries in their own tables so a state change and its entry commit together.
 */
export interface AuditStore {
  /** The current head. */
  head(): Promise<ChainHead>;
  /**
   * Calls `build` with the head under the store's exclusion and durably
   * appends what it returns, all or nothing. Resolves with the stored entries.
   */
  append(build: EntryBuilder): Promise<SealedEntry[]>;
  /** Entries with `fromId <= id <= toId`, in order (defaults: the whole log). */
  read(range?: { fromId?: number; toId?: number }): AsyncIterable<AuditEntry>;
  /** The stored lines, when the store keeps them verbatim: lets verification check canonical form. */
  lines?(): AsyncIterable<string>;
}

/** Checks that a builder's output continues `head` exactly. */
export function assertContinues(head: ChainHead, sealed: readonly SealedEntry[]): void {
  let expectedId = head.size + 1;
  let expectedPrev = head.hash;
  for (const { entry } of sealed) {
    if (entry.id !== expectedId || (expectedPrev !== null && entry.prev_hash !== expectedPrev)) {
      throw new AuditChainError('STORE_FAILED', `entry ${entry.id} does not continue the head (expected id ${expectedId})`);
    }
    expectedId++;
    expectedPrev = entry.hash;
  }
}

/**
 * An in-memory store for tests and embedders. Nothing survives the process.
 *
 * @example
 * ```ts
 * const log = new AuditLog(new MemoryAuditStore(), { origin: 'demo' });
 * await log.append({ actor: 'alice', action: 'login' });
 * ```
 */
export class MemoryAuditStore implements AuditStore {
  private readonly sealed: SealedEntry[] = [];

  async head(): Promise<ChainHead> {
    return this.currentHead();
  }

  async append(build: EntryBuilder): Promise<SealedEntry[]> {
    // Head, build and push run in one synchronous step: concurrent appends cannot interleave.
    const head = this.currentHead();
    const entries = build(head);
    assertContinues(head, entries);
    // One push per entry: spreading a batch into push() overflows the call stack past about 100,000 arguments.
    for (const entry of entries) this.sealed.push(entry);
    return entries;
  }

  private currentHead(): ChainHead {
    const last = this.sealed[this.sealed.length - 1];
    return { size: this.sealed.length, hash: last ? last.entry.hash : null };
  }

  async *read(range: { fromId?: number; toId?: number } = {}): AsyncIterable<AuditEntry> {
    const from = Math.max(1, range.fromId ?? 1);
    const to = Math.min(this.sealed.length, range.toId ?? this.sealed.length);
    for (let id = from; id <= to; id++) yield this.sealed[id - 1]!.entry;
  }

  async *lines(): AsyncIterable<string> {
    for (const { line } of this.sealed) yield line;
  }
}
