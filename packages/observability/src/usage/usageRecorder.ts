/**
 * @module usageRecorder
 * Accounts every request to its client key, tenant, provider and model, by
 * the minute. `request:end` costs one Map lookup and a few field increments
 * in memory; a batch writer sends the minutes counted since its last write
 * to the {@link UsageStore} once per flush interval, off the request path
 * (the same shape as the credential quota's batched writes). A write that
 * fails is merged back and retried at the next interval, so nothing is lost
 * while the process lives; `close()` writes what is left. What a crash can
 * lose is the counts of at most one flush interval (plus those of failed
 * writes still waiting).
 */
import type { ClientIdentity } from '@switchyard/core-routing';
import { type Scheduler, systemScheduler, type TimerHandle } from '@switchyard/runtime';
import type { RequestEndEvent } from '../events.js';
import { type TokenPrice, tokenCost } from '../metrics/tokenCost.js';
import { RollupTable } from './rollupTable.js';
import { addCounts, USAGE_MINUTE_MS, type UsageRollup, type UsageStore } from './usageStore.js';

/** The client of a request when `/v1` is open (no key configured). */
export const ANONYMOUS_CLIENT: ClientIdentity = { keyId: 'anonymous', name: 'anonymous', tenant: 'default' };
/** The provider of a request that reached none (every candidate cooling, say). */
export const NO_PROVIDER = 'none';
/** Default flush interval: 10 s. */
export const DEFAULT_USAGE_FLUSH_INTERVAL_MS = 10_000;

/** What a counted request adds, after its cost is priced: also what {@link UsageRecorderOptions.onCounted} hears. */
export interface CountedRequest {
  client: ClientIdentity;
  outcome: RequestEndEvent['outcome'];
  tokens: { input: number; output: number };
  cached: boolean;
  cost: number;
}

/** Options of {@link UsageRecorder}. */
export interface UsageRecorderOptions {
  store: UsageStore;
  scheduler?: Scheduler;
  /** How long counts wait in memory before a write (default 10 s): at most what a crash loses. */
  flushIntervalMs?: number;
  /** Prices per 1,000 tokens by provider, read per request so a reload applies (none: cost 0). */
  tokenPrice?: (provider: string) => TokenPrice | undefined;
  /** Told of each counted request (the bounded per-tenant and per-key metrics). */
  onCounted?: (request: CountedRequest) => void;
  /** A write failed; its rows are kept for the next one. */
  onFlushError?: (error: unknown, rows: number) => void;
}

/** An emitter of the relay's `request:end` (eventemitter3 or Node's). */
export interface RequestEndSource {
  on(event: 'request:end', listener: (event: RequestEndEvent) => void): unknown;
  off(event: 'request:end', listener: (event: RequestEndEvent) => void): unknown;
}

/**
 * Per-minute usage rollups, counted in memory and written in batches.
 *
 * @example
 * ```ts
 * const recorder = new UsageRecorder({ store: new MemoryUsageStore(), tokenPrice: (p) => prices[p] });
 * const detach = recorder.attach(relay.events);
 * // ... on shutdown:
 * detach();
 * await recorder.close(); // writes what is left
 * ```
 */
export class UsageRecorder {
  /** Kept for the recorder's life: a flush zeroes its rows in place rather than building a new table. */
  private readonly pending = new RollupTable();
  private timer: TimerHandle | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly scheduler: Scheduler;
  private readonly intervalMs: number;
  /** Writes that reached the store. */
  flushes = 0;
  /** Writes that failed (their rows were kept). */
  failures = 0;

  constructor(private readonly options: UsageRecorderOptions) {
    this.scheduler = options.scheduler ?? systemScheduler;
    this.intervalMs = options.flushIntervalMs ?? DEFAULT_USAGE_FLUSH_INTERVAL_MS;
  }

  /** Subscribes to `request:end`; returns the detach function. */
  attach(source: RequestEndSource): () => void {
    const listener = (event: RequestEndEvent) => this.record(event);
    source.on('request:end', listener);
    return () => source.off('request:end', listener);
  }

  /** Counts one finished request into its minute. O(1), no I/O. */
  record(event: RequestEndEvent): void {
    const client = event.client ?? ANONYMOUS_CLIENT;
    const provider = event.provider ?? NO_PROVIDER;
    const minute = event.at - (event.at % USAGE_MINUTE_MS);
    const row = this.pending.row(minute, client.keyId, client.name, client.tenant, provider, event.model);
    const { tokens } = event;
    const price =
      event.provider !== null && (tokens.input > 0 || tokens.output > 0) ? this.options.tokenPrice?.(event.provider) : undefined;
    const cost = price ? tokenCost(tokens, price) : 0;
    row.requests++;
    if (event.outcome === 'error') row.errors++;
    if (event.cached) row.cacheHits++;
    row.inputTokens += tokens.input;
    row.outputTokens += tokens.output;
    row.cost += cost;
    this.options.onCounted?.({ client, outcome: event.outcome, tokens, cached: event.cached, cost });
    if (this.timer === undefined && !this.closed) this.timer = this.scheduler.setTimeout(() => this.onTimer(), this.intervalMs);
  }

  /** Rows counted and not yet written. */
  get pendingRows(): number {
    return this.pending.size;
  }

  /**
   * Writes what is counted now, after any write in progress. Resolves once it is in the store (a failure is
   * reported through `onFlushError` and kept, not thrown): a reader that flushes first sees this node's latest.
   */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.writeOnce());
    return this.writing;
  }

  /** Stops the timer and writes what is left. Counts recorded after this are written only by another `flush()`. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) this.scheduler.clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private onTimer(): void {
    this.timer = undefined;
    void this.flush();
  }

  private async writeOnce(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending.take();
    try {
      await this.options.store.add(batch);
      this.flushes++;
    } catch (error) {
      this.failures++;
      this.keep(batch);
      this.options.onFlushError?.(error, batch.length);
      if (this.timer === undefined && !this.closed) this.timer = this.scheduler.setTimeout(() => this.onTimer(), this.intervalMs);
    }
  }

  /** A failed batch goes back into pending, merged with what was counted while it was out. */
  private keep(batch: readonly UsageRollup[]): void {
    for (const row of batch) addCounts(this.pending.row(row.minute, row.keyId, row.keyName, row.tenant, row.provider, row.model), row);
  }
}
