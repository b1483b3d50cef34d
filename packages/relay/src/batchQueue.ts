/**
 * @module batchQueue
 * Coalesces writes to slow stores (usage, quota, latency) so that a slow
 * store never sits on the request path: items are flushed when
 * `maxBatchSize` accumulate or `timeoutMs` after the first one, whichever
 * comes first, and a failing flush is reported, never thrown at a request.
 */
import { type Scheduler, systemScheduler, type TimerHandle } from '@switchyard/runtime';

/** `server.operations.batch_processing`. */
export interface BatchSettings {
  /** Default true; when false every item is flushed on its own, still off the request path. */
  enabled?: boolean;
  /** Default 10. */
  maxBatchSize?: number;
  /** Default 100 ms. */
  timeoutMs?: number;
}

/** Options of {@link BatchQueue}. */
export interface BatchQueueOptions<T> extends BatchSettings {
  flush: (items: T[]) => Promise<void> | void;
  onError?: (error: unknown, items: T[]) => void;
  scheduler?: Scheduler;
}

/**
 * A write-coalescing queue.
 *
 * @example
 * ```ts
 * const usage = new BatchQueue({ maxBatchSize: 10, timeoutMs: 100, flush: (records) => store.addUsage(records) });
 * usage.push({ credential: 'c1', tokens: 42 });
 * ```
 */
export class BatchQueue<T> {
  private readonly options: BatchQueueOptions<T>;
  private readonly scheduler: Scheduler;
  private items: T[] = [];
  private timer: TimerHandle | undefined;
  private inFlight = new Set<Promise<void>>();
  /** Batches flushed so far. */
  flushes = 0;

  constructor(options: BatchQueueOptions<T>) {
    this.options = options;
    this.scheduler = options.scheduler ?? systemScheduler;
  }

  /** Queues an item; never blocks and never throws. */
  push(item: T): void {
    this.items.push(item);
    const max = this.options.enabled === false ? 1 : Math.max(1, this.options.maxBatchSize ?? 10);
    if (this.items.length >= max) {
      this.flushNow();
    } else if (this.timer === undefined) {
      this.timer = this.scheduler.setTimeout(() => this.flushNow(), this.options.timeoutMs ?? 100);
    }
  }

  /** Flushes what is queued and waits for every flush in progress. */
  async drain(): Promise<void> {
    this.flushNow();
    await Promise.all([...this.inFlight]);
  }

  private flushNow(): void {
    if (this.timer !== undefined) {
      this.scheduler.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.items.length === 0) return;
    const batch = this.items;
    this.items = [];
    this.flushes++;
    const run = (async () => {
      try {
        await this.options.flush(batch);
      } catch (error) {
        this.options.onError?.(error, batch);
      }
    })();
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }
}
