/**
 * @module quotaFlusher
 * The quota tracker's writes: usage counted in memory (each entry's
 * `pending` tokens and settled `releases`, and the deltas of periods that
 * ended) goes to the `QuotaStore` in one batch per interval, or as soon as
 * `batchSize` requests' usage is waiting, off the request path, and the store's answer (every node's total) is taken back into the
 * entries. A batch that fails is kept whole for the next write, so nothing
 * is lost.
 *
 * Reservations whose admission failed without a known outcome are
 * abandoned (`QuotaStore.abandon`) at once, not at the interval: they may
 * be holding room that other requests are refused for. One that cannot be
 * written is kept for the next write until its ttl has passed (by then the
 * reservation has lapsed by itself).
 *
 * After the tracker stops, a write is asked for at once (a zero timer, so a
 * release and its tokens still leave together), and a failed one waits for
 * the next request to write rather than retrying on a timer.
 */
import type { Scheduler } from '@switchyard/runtime';
import type { QuotaDelta, QuotaReservationRequest, QuotaStore, QuotaUsage } from '../store/quotaStore.js';
import { periodIso, type QuotaEntry, releasesOf } from './quotaEntry.js';

/** What the flusher needs from its tracker. */
export interface FlushHooks {
  /** Every tracked entry. */
  entries(): Iterable<QuotaEntry>;
  /** Whether the entry is still the tracked one (the credential was not removed while its batch was out). */
  isTracked(entry: QuotaEntry): boolean;
  /** The store's usage of a tracked credential, as a write answered it. */
  stored(id: string, usage: QuotaUsage): void;
  /** How many announcements the tracker has heard: tells an answer an announcement overtook from a newer one. */
  announcements(): number;
  /** The entry's count changed with an answer. */
  changed(entry: QuotaEntry): void;
  /** A batch could not be written (it is kept). */
  failed(error: unknown, pendingCredentials: number): void;
}

/** Batches a tracker's usage into the store; one per tracker. */
export class QuotaFlusher {
  /** After stop: each write is asked for at once, and a failed one is not retried by itself. */
  stopped = false;
  /** Unflushed usage of periods that have ended, written before the current period's. */
  private leftovers: QuotaDelta[] = [];
  /** Reservations to abandon, each with when it lapses by itself (epoch ms): after that there is nothing to abandon. */
  private abandoned: { request: QuotaReservationRequest; lapsesAt: number }[] = [];
  private timer: ReturnType<Scheduler['setTimeout']> | undefined;
  private flushing: Promise<void> | undefined;
  /** Reports counted since the last write took its batch. */
  private reports = 0;
  /** A write was asked for because `batchSize` reports were waiting, and has not taken its batch yet. */
  private full = false;

  constructor(
    private readonly store: QuotaStore,
    private readonly scheduler: Scheduler,
    private readonly intervalMs: number,
    private readonly hooks: FlushHooks,
    /** Write at once when this many reports are waiting, without waiting for the interval (undefined: only the interval). */
    private readonly batchSize?: number,
  ) {}

  /** A delta of a period that ended, or of an entry no longer tracked: written first at the next write. */
  leftover(delta: QuotaDelta): void {
    this.leftovers.push(delta);
  }

  /** A reservation whose admission failed without a known outcome: abandoned in the store at once. */
  abandon(request: QuotaReservationRequest): void {
    this.abandoned.push({ request, lapsesAt: this.scheduler.now() + request.ttlMs });
    void this.flush();
  }

  /** A request's usage was counted: written at the end of the interval, or at once when the batch is full. */
  reported(): void {
    this.reports++;
    if (this.batchSize !== undefined && this.reports >= this.batchSize && !this.full) {
      this.full = true;
      this.cancel();
      void this.flush();
      return;
    }
    this.soon();
  }

  /** Something is pending: write it at the end of the interval (at once after stop). */
  soon(): void {
    if (this.timer !== undefined || this.full) return;
    this.timer = this.scheduler.setTimeout(
      () => {
        this.timer = undefined;
        void this.flush();
      },
      this.stopped ? 0 : this.intervalMs,
    );
  }

  /** Drops the timer of a write asked for (stop() writes itself). */
  cancel(): void {
    if (this.timer !== undefined) this.scheduler.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Writes what is pending now (after a write in progress), and takes the store's totals. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flushOnce());
    return this.flushOnce();
  }

  private async flushOnce(): Promise<void> {
    this.reports = 0;
    this.full = false;
    const leftovers = this.leftovers;
    this.leftovers = [];
    const now = this.scheduler.now();
    const abandoned = this.abandoned.filter((a) => a.lapsesAt > now);
    this.abandoned = [];
    const batch: { entry: QuotaEntry; delta: QuotaDelta }[] = [];
    for (const entry of this.hooks.entries()) {
      if (entry.pending === 0 && entry.releases.length === 0) continue;
      const period = periodIso(entry);
      batch.push({ entry, delta: { id: entry.id, tokens: entry.pending, period_start: period, ...releasesOf(entry) } });
      entry.pending = 0;
    }
    if (batch.length === 0 && leftovers.length === 0 && abandoned.length === 0) return;
    const sentAfter = this.hooks.announcements();
    const run = (async () => {
      if (abandoned.length > 0) await this.abandonNow(abandoned);
      if (batch.length === 0 && leftovers.length === 0) return;
      let totals: Map<string, QuotaUsage>;
      try {
        totals = await this.store.add([...leftovers, ...batch.map((b) => b.delta)]);
      } catch (error) {
        this.keep(leftovers, batch);
        this.hooks.failed(error, batch.length + leftovers.length);
        // After stop, the next record's write carries these: retrying here would loop on a store that is gone.
        if (!this.stopped) this.soon();
        return;
      }
      for (const { entry, delta } of batch) {
        const total = totals.get(entry.id);
        if (!total || !this.hooks.isTracked(entry)) continue;
        this.hooks.stored(entry.id, total);
        const current = periodIso(entry);
        if (total.period_start !== current || delta.period_start !== current) continue;
        // The store's total (with other nodes' usage) plus what was counted here since the batch left. An
        // announcement heard while the batch was out may be of a later commit: then the higher of the two
        // holds. Otherwise the answer is the newest word (it also carries a reset no announcement brought).
        entry.storedTotal = entry.announcedAt > sentAfter ? Math.max(entry.storedTotal, total.used) : total.used;
        const used = entry.storedTotal + entry.pending;
        if (used !== entry.used) {
          entry.used = used;
          this.hooks.changed(entry);
        }
      }
    })();
    this.flushing = run;
    try {
      await run;
    } finally {
      if (this.flushing === run) this.flushing = undefined;
    }
  }

  /** Abandons reservations in the store; those it could not are kept for the next write. */
  private async abandonNow(abandoned: { request: QuotaReservationRequest; lapsesAt: number }[]): Promise<void> {
    try {
      await this.store.abandon!(abandoned.map((a) => a.request));
    } catch (error) {
      this.abandoned.unshift(...abandoned);
      this.hooks.failed(error, new Set(abandoned.map((a) => a.request.id)).size);
      if (!this.stopped) this.soon();
    }
  }

  /** Nothing is lost: a failed batch's tokens and releases go back to pending, for the next write. */
  private keep(leftovers: QuotaDelta[], batch: { entry: QuotaEntry; delta: QuotaDelta }[]): void {
    this.leftovers.unshift(...leftovers);
    for (const { entry, delta } of batch) {
      if (!this.hooks.isTracked(entry)) continue;
      if (delta.period_start === periodIso(entry)) {
        entry.pending += delta.tokens;
        entry.releases.unshift(...(delta.reservations ?? []));
      } else this.leftovers.push(delta);
    }
  }
}
