/**
 * @module memoryCredentialStore
 * The in-memory `CredentialStore`: for tests, for embedders that keep
 * credentials elsewhere, and as the reference the contract suite is written
 * against. Records are cloned on the way in and out, so callers cannot
 * change stored state by mutating what they hold.
 */
import { EventEmitter } from 'eventemitter3';
import { type Credential, parseCredential } from '../credential.js';
import { RevisionConflict } from '../errors.js';
import { callEach } from '../util/callEach.js';
import type { CredentialStore, DeleteOptions, PutOptions, StoreChange, Unsubscribe } from './credentialStore.js';

/**
 * Credentials in a `Map`.
 *
 * @example
 * ```ts
 * const store = new MemoryCredentialStore();
 * const manager = new CredentialManager({ store });
 * ```
 */
export class MemoryCredentialStore implements CredentialStore {
  readonly backend = 'memory' as const;
  private readonly records = new Map<string, Credential>();
  /** Revision of each deleted id, so a re-created credential continues above it. */
  private readonly tombstones = new Map<string, number>();
  private readonly changes = new EventEmitter<{ change: [StoreChange] }>();

  constructor(initial: readonly Credential[] = []) {
    for (const credential of initial) {
      const parsed = parseCredential(credential);
      // A stored credential has been written at least once.
      this.records.set(parsed.id, { ...parsed, revision: Math.max(1, parsed.revision) });
    }
  }

  async list(): Promise<Credential[]> {
    return [...this.records.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((c) => structuredClone(c));
  }

  async get(id: string): Promise<Credential | undefined> {
    const record = this.records.get(id);
    return record ? structuredClone(record) : undefined;
  }

  async put(credential: Credential, options: PutOptions = {}): Promise<Credential> {
    const current = this.records.get(credential.id);
    checkExpected(credential.id, options.expectedRevision, current?.revision ?? null);
    const revision = Math.max(current?.revision ?? 0, this.tombstones.get(credential.id) ?? 0) + 1;
    const stored = parseCredential({ ...structuredClone(credential), revision });
    this.records.set(stored.id, stored);
    this.tombstones.delete(stored.id);
    this.emit({ type: 'auth.upsert', id: stored.id, revision, origin: 'local' });
    return structuredClone(stored);
  }

  async delete(id: string, options: DeleteOptions = {}): Promise<boolean> {
    const current = this.records.get(id);
    if (options.expectedRevision !== undefined) checkExpected(id, options.expectedRevision, current?.revision ?? null);
    if (!current) return false;
    this.records.delete(id);
    const revision = current.revision + 1;
    this.tombstones.set(id, revision);
    this.emit({ type: 'auth.delete', id, revision, origin: 'local' });
    return true;
  }

  watch(listener: (change: StoreChange) => void): Unsubscribe {
    this.changes.on('change', listener);
    return () => this.changes.off('change', listener);
  }

  async close(): Promise<void> {
    this.changes.removeAllListeners();
  }

  private emit(change: StoreChange): void {
    callEach(this.changes.listeners('change'), change);
  }
}

/** Throws {@link RevisionConflict} unless `expected` (when given) matches `actual`. */
export function checkExpected(id: string, expected: number | null | undefined, actual: number | null): void {
  if (expected === undefined) return;
  if (expected === actual) return;
  throw new RevisionConflict(id, expected, actual);
}
