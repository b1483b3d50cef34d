/**
 * @module authUpdateQueue
 * The auth update queue: every runtime change to credentials (a file in
 * `auths/` changed, the config file changed, a websocket client sent
 * `auth.upsert`, another node announced a change) enters here and is
 * applied by one consumer, in order.
 *
 * The queue holds 256 updates (by default). It never blocks a producer and
 * never drops an update: once it is full, further updates wait in an
 * overflow map keyed by credential, where a newer update for the same
 * credential replaces the older one (the newer state supersedes it; their
 * waiters are all answered by the one that is applied). Memory is thus
 * bounded by the number of distinct credentials, not by the burst. Updates
 * of one credential are delivered in the order they were pushed.
 */
import { EventEmitter } from 'eventemitter3';
import type { NewCredential } from '../credential.js';
import { CredentialsError } from '../errors.js';

/** Where an update came from. */
export type UpdateSource = 'file' | 'store' | 'runtime' | 'cluster' | 'config';

/** One change to apply. */
export type AuthUpdate =
  | {
      type: 'auth.upsert';
      id: string;
      source: UpdateSource;
      /** The new credential, for runtime upserts; without it the consumer re-reads the store. */
      credential?: NewCredential;
      /** The revision announced with the change, when known. */
      revision?: number;
    }
  | { type: 'auth.delete'; id: string; source: UpdateSource; revision?: number }
  | { type: 'config.reload'; path: string; source: UpdateSource };

/**
 * What applying an update came to, as its waiters learn it: the revision the
 * credential is at afterwards (for a delete, the revision it had when it was
 * removed), or null when there is none to tell (it was already gone).
 */
export interface AppliedUpdate {
  revision: number | null;
}

/** An update in the queue, with the callbacks of everyone waiting for it. */
export interface QueuedUpdate {
  readonly update: AuthUpdate;
  /** Answers every waiter of this update (and of the updates it replaced). */
  settle(error?: unknown, applied?: AppliedUpdate): void;
}

/** Counters of the queue. */
export interface QueueStats {
  capacity: number;
  /** Updates waiting in the queue proper. */
  depth: number;
  /** Credentials waiting in the overflow map. */
  overflow: number;
  enqueued: number;
  /** Updates replaced by a newer one for the same credential. */
  coalesced: number;
  delivered: number;
  /** Deepest the queue proper has been. */
  max_depth: number;
}

type Waiter = (error?: unknown, applied?: AppliedUpdate) => void;

interface Entry {
  update: AuthUpdate;
  waiters: Waiter[];
}

/** Events of {@link AuthUpdateQueue}. */
export interface QueueEvents {
  /** The queue is full; updates now coalesce per credential. */
  full: [QueueStats];
  /** The overflow map has drained back into the queue. */
  drained: [QueueStats];
}

function keyOf(update: AuthUpdate): string {
  return update.type === 'config.reload' ? `config:${update.path}` : `auth:${update.id}`;
}

/**
 * A bounded FIFO of auth updates that coalesces per credential when full.
 *
 * @example
 * ```ts
 * const queue = new AuthUpdateQueue();
 * queue.push({ type: 'auth.delete', id: 'openai-old', source: 'runtime' });
 * for await (const item of queue) { await apply(item.update); item.settle(); }
 * ```
 */
export class AuthUpdateQueue {
  readonly capacity: number;
  readonly events = new EventEmitter<QueueEvents>();
  private buffer: Entry[] = [];
  private head = 0;
  private readonly overflow = new Map<string, Entry>();
  private wake: (() => void) | undefined;
  private closed = false;
  private counters = { enqueued: 0, coalesced: 0, delivered: 0, max_depth: 0 };

  constructor(options: { capacity?: number } = {}) {
    const capacity = options.capacity ?? 256;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new CredentialsError('invalid_config', 'the auth update queue capacity must be a whole number ≥ 1', { field: 'capacity' });
    }
    this.capacity = capacity;
  }

  /** Updates waiting in the queue proper. */
  get depth(): number {
    return this.buffer.length - this.head;
  }

  /**
   * Adds an update; never blocks, never drops. `waiter` is called once the
   * update (or a newer one for the same credential that replaced it) has
   * been applied, with the error if applying failed, or else with what the
   * consumer reports of it.
   */
  push(update: AuthUpdate, waiter?: Waiter): void {
    if (this.closed) {
      waiter?.(new CredentialsError('closed', 'the auth update queue is closed'));
      return;
    }
    this.counters.enqueued++;
    const waiters = waiter ? [waiter] : [];
    if (this.depth < this.capacity && this.overflow.size === 0) {
      this.buffer.push({ update, waiters });
      this.counters.max_depth = Math.max(this.counters.max_depth, this.depth);
    } else {
      const key = keyOf(update);
      const older = this.overflow.get(key);
      if (older) {
        // The newer state supersedes the older one; whoever waited for the older one learns from the newer.
        this.counters.coalesced++;
        older.update = update;
        older.waiters.push(...waiters);
      } else {
        if (this.overflow.size === 0) this.events.emit('full', this.stats());
        this.overflow.set(key, { update, waiters });
      }
    }
    this.wake?.();
  }

  /** The next update, or undefined when none is waiting. */
  shift(): QueuedUpdate | undefined {
    if (this.depth === 0) return undefined;
    const entry = this.buffer[this.head]!;
    this.buffer[this.head] = undefined as unknown as Entry;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.buffer.length) {
      this.buffer = this.buffer.slice(this.head);
      this.head = 0;
    }
    this.refill();
    this.counters.delivered++;
    return {
      update: entry.update,
      settle: (error?: unknown, applied?: AppliedUpdate) => {
        for (const waiter of entry.waiters.splice(0)) waiter(error, applied);
      },
    };
  }

  /** Waits for the next update; undefined once the queue is closed and empty. */
  async next(): Promise<QueuedUpdate | undefined> {
    for (;;) {
      const item = this.shift();
      if (item || this.closed) return item;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<QueuedUpdate> {
    for (;;) {
      const item = await this.next();
      if (!item) return;
      yield item;
    }
  }

  /** Counters for the operations API. */
  stats(): QueueStats {
    return { capacity: this.capacity, depth: this.depth, overflow: this.overflow.size, ...this.counters };
  }

  /**
   * Stops accepting updates. The consumer still drains what is waiting;
   * `next()` returns undefined after that.
   */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  /** Moves overflow entries, oldest first, into the space a shift made. */
  private refill(): void {
    if (this.overflow.size === 0) return;
    for (const [key, entry] of this.overflow) {
      if (this.depth >= this.capacity) break;
      this.overflow.delete(key);
      this.buffer.push(entry);
    }
    if (this.overflow.size === 0) this.events.emit('drained', this.stats());
  }
}
