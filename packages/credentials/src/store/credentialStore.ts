/**
 * @module credentialStore
 * The `CredentialStore` port: where credentials live between restarts. The
 * memory and file adapters live in this package; the PostgreSQL adapter
 * (shared by several gateway nodes) implements the same port, and every
 * adapter passes the same contract suite (`@switchyard/credentials/contract`).
 *
 * Two properties carry the multi-node design:
 * - **Revisions.** Each stored change (a put, and a delete's tombstone)
 *   raises the credential's revision, so a consumer that sees changes out of
 *   order, or twice, can ignore the stale ones.
 * - **Change notifications.** `watch` reports changes made through the store
 *   and, where the backend can see them, changes made by others (another
 *   process editing `auths/`, another node). Delivery is at least once and
 *   carries no secrets: a consumer re-reads the credential it names.
 */
import type { Credential } from '../credential.js';

/** Which kind of backend a store is (it becomes `origin.backend_mode` on the cluster bus). */
export type StoreBackend = 'memory' | 'file' | 'git' | 'postgres' | 'object';

/** One change a store reports. */
export interface StoreChange {
  type: 'auth.upsert' | 'auth.delete';
  id: string;
  /** The revision after the change, when the store knows it without reading the credential. */
  revision?: number;
  /** `local` for a change made through this store object, `external` for one it observed. */
  origin: 'local' | 'external';
}

/** Options of {@link CredentialStore.put}. */
export interface PutOptions {
  /**
   * Write only if the stored revision is this one; `null` means "only if
   * absent" (create). Otherwise a `RevisionConflict` is thrown.
   */
  expectedRevision?: number | null;
}

/** Options of {@link CredentialStore.delete}. */
export interface DeleteOptions {
  /** Delete only if the stored revision is this one. */
  expectedRevision?: number;
}

/** Stops a watch. */
export type Unsubscribe = () => void;

/**
 * Storage of credentials. Records go in and come out whole (secrets
 * included): encryption at rest is the adapter's job, and redaction is the
 * caller's when a record leaves the process.
 *
 * @example
 * ```ts
 * const store: CredentialStore = new MemoryCredentialStore();
 * const stored = await store.put(credential);          // revision 1
 * await store.put({ ...stored, priority: 2 }, { expectedRevision: stored.revision });
 * const stop = store.watch((change) => console.log(change.type, change.id));
 * ```
 */
export interface CredentialStore {
  readonly backend: StoreBackend;
  /**
   * Every credential, ordered by id. A record the adapter cannot read (a
   * malformed file, a wrong key) comes back with status `error`, an empty
   * token and a `status_message`, rather than failing the whole list.
   */
  list(): Promise<Credential[]>;
  /** One credential, or `undefined`. Unreadable records come back as in {@link list}. */
  get(id: string): Promise<Credential | undefined>;
  /**
   * Creates or replaces a credential and returns it as stored, with the
   * revision the store assigned (the previous revision plus one, also after
   * a delete). The caller's `revision` field is ignored.
   */
  put(credential: Credential, options?: PutOptions): Promise<Credential>;
  /** Deletes a credential; false when there was none. */
  delete(id: string, options?: DeleteOptions): Promise<boolean>;
  /** Reports changes until unsubscribed (see the module notes for the guarantees). */
  watch(listener: (change: StoreChange) => void): Unsubscribe;
  /** Releases watchers and connections. */
  close(): Promise<void>;
}
