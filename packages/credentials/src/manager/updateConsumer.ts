/**
 * @module updateConsumer
 * The one consumer of the auth update queue, and its producers' entry
 * points: store change notifications (files edited by others, other
 * nodes), runtime calls (the websocket gateway) and the cluster bus. It
 * applies updates one at a time, in queue order, draining a backlog in a
 * tight loop, and answers each producer once its update (or the newer one
 * that replaced it) is applied.
 */
import type { Credential } from '../credential.js';
import { CredentialNotFound } from '../errors.js';
import type { AppliedUpdate, AuthUpdate, AuthUpdateQueue } from '../queue/authUpdateQueue.js';
import type { StoreChange } from '../store/credentialStore.js';
import { type CredentialWriter, newCredentialId } from './credentialWriter.js';
import type { RuntimeUpdate, RuntimeUpdateResult } from './managerTypes.js';

/** What the consumer needs from the manager. */
export interface UpdateConsumerDeps {
  queue: AuthUpdateQueue;
  writer: CredentialWriter;
  held(credentialId: string): Credential | undefined;
  removed(credentialId: string): void;
  /** A credential was deleted at runtime: forget its refresh backoff. */
  forgotten(credentialId: string): void;
  configReloaded(path: string): void;
  applied(update: AuthUpdate, error: unknown): void;
}

/** Applies queued auth updates. */
export class UpdateConsumer {
  private readonly deps: UpdateConsumerDeps;
  /**
   * Store notifications queued or being applied, by credential id. While one is, the pools may not hold
   * the credential yet although they are about to: a delete must not be taken for one they never held.
   */
  private readonly storePending = new Map<string, number>();

  constructor(deps: UpdateConsumerDeps) {
    this.deps = deps;
  }

  /** Queues a store's change notification, unless the pools already hold it. */
  onStoreChange(change: StoreChange): void {
    // Our own writes in progress, and changes the pools already hold, need no trip through the queue.
    if (change.origin === 'local' && this.deps.writer.isWriting(change.id)) return;
    const held = this.deps.held(change.id);
    if (change.revision !== undefined) {
      if (change.type === 'auth.upsert' && held && held.revision >= change.revision) return;
      // Not held, and no notification of it on its way in (an upsert whose read of the store is in flight would
      // hold it a moment later, after this delete had been dropped): nothing to remove.
      if (change.type === 'auth.delete' && !held && !this.storePending.has(change.id)) return;
    }
    const { id } = change;
    this.storePending.set(id, (this.storePending.get(id) ?? 0) + 1);
    // The queue answers each push once: when it is applied, when a newer update that replaced it is, or when it closes.
    const settled = () => {
      const left = (this.storePending.get(id) ?? 1) - 1;
      if (left > 0) this.storePending.set(id, left);
      else this.storePending.delete(id);
    };
    this.deps.queue.push(
      { type: change.type, id, source: 'store', ...(change.revision === undefined ? {} : { revision: change.revision }) },
      settled,
    );
  }

  /** Queues a runtime change; resolves once applied, with the credential's id and revision. */
  async submit(update: RuntimeUpdate): Promise<RuntimeUpdateResult> {
    if (update.type === 'auth.delete') {
      const applied = await this.enqueue({ type: 'auth.delete', id: update.id, source: 'runtime' });
      return { id: update.id, revision: applied.revision };
    }
    const id = update.credential.id ?? newCredentialId(update.credential.provider);
    const applied = await this.enqueue({ type: 'auth.upsert', id, credential: { ...update.credential, id }, source: 'runtime' });
    return { id, revision: applied.revision };
  }

  /** Queues any update; resolves once applied (with what it came to), rejects with why not. */
  enqueue(update: AuthUpdate): Promise<AppliedUpdate> {
    return new Promise((resolve, reject) =>
      this.deps.queue.push(update, (error, applied) => (error === undefined ? resolve(applied ?? { revision: null }) : reject(error))),
    );
  }

  /** Applies updates until the queue is closed and drained. */
  async run(): Promise<void> {
    const { queue } = this.deps;
    for (;;) {
      const item = queue.shift() ?? (await queue.next());
      if (!item) return;
      let error: unknown;
      let applied: AppliedUpdate | undefined;
      try {
        applied = await this.apply(item.update);
      } catch (caught) {
        error = caught;
      }
      item.settle(error, applied);
      this.deps.applied(item.update, error);
    }
  }

  private async apply(update: AuthUpdate): Promise<AppliedUpdate> {
    if (update.type === 'config.reload') {
      this.deps.configReloaded(update.path);
      return { revision: null };
    }
    if (update.source === 'runtime' || update.source === 'cluster') {
      if (update.type === 'auth.delete') {
        const revision = this.deps.held(update.id)?.revision ?? null;
        let gone = false;
        await this.deps.writer.remove(update.id).catch((error) => {
          // Deleting what is already gone is done.
          if (!(error instanceof CredentialNotFound)) throw error;
          gone = true;
          this.deps.removed(update.id);
        });
        this.deps.forgotten(update.id);
        return { revision: gone ? null : revision };
      }
      if (update.credential) {
        const stored = await this.deps.writer.upsert(update.id, update.credential);
        return { revision: stored.revision };
      }
    }
    // A notification without a payload: the store holds the truth.
    await this.deps.writer.sync(update.id);
    return { revision: this.deps.held(update.id)?.revision ?? null };
  }
}
