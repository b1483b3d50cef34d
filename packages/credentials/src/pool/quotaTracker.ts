/**
 * @module quotaTracker
 * Token quota per credential. Usage is counted in memory when a request
 * reports it, and added to the `QuotaStore` in batches, off the request
 * path (`QuotaFlusher`). Periods follow each provider's reset schedule (`daily` or `monthly`,
 * at UTC boundaries) on the injected clock: a credential that ran out is
 * `exhausted` until its period ends, then counts from zero again.
 *
 * The store's answer to each batch includes what other nodes added (with
 * the PostgreSQL store), so the local view converges on the shared one at
 * every flush. A store that can `watch` also announces every total any node
 * commits: the tracker applies those as they arrive, so a limit crossed on
 * one node exhausts the credential on all of them without waiting for
 * their next flush. Within a period, totals only raise the local count
 * (an announcement may overtake the answer to an earlier write), except a
 * `replaced` one (an operator's reset on another node).
 *
 * A store that can `reserve` (PostgreSQL) also gets admission control:
 * `admit` holds an estimate of a request's tokens in the shared store
 * before it goes upstream, and `record` (or `release`, for a request that
 * used nothing) lets it go with the next flush, in the same write that adds
 * the tokens. An admission the store failed may have been recorded all the
 * same (its answer was lost after the commit): its reservation is abandoned
 * at once, so it does not hold room until its ttl.
 *
 * Shutdown loses nothing a graceful stop can keep: `stop()` waits (at most
 * `stopTimeoutMs`) for requests that hold a reservation, or wait for one,
 * to settle, then writes everything pending. From `stop()` on, a record or
 * release (a request that finishes late) is written at once, one write
 * each, for as long as the store is open; a failed write after stop is
 * kept for the next one, never retried on a timer.
 */
import { type Scheduler, systemScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import { type QuotaStatus, remainingOf } from '../credential.js';
import type { QuotaStore, QuotaTotal, QuotaUsage } from '../store/quotaStore.js';
import { nextPeriodStart, periodStart, type ResetSchedule, scheduleAt } from '../util/time.js';
import { type AdmissionCounts, QuotaAdmissionControl } from './quotaAdmissionControl.js';
import {
  newEntry,
  periodIso,
  type QuotaAdmission,
  type QuotaEntry,
  type QuotaTrackerEvents,
  type QuotaTrackerOptions,
  releasesOf,
} from './quotaEntry.js';
import { QuotaFlusher } from './quotaFlusher.js';

export type { AdmissionCounts } from './quotaAdmissionControl.js';
export type { QuotaAdmission, QuotaTrackerEvents, QuotaTrackerOptions, QuotaUpdateEvent } from './quotaEntry.js';

/**
 * Counts tokens per credential and resets them on schedule.
 *
 * @example
 * ```ts
 * const quotas = new QuotaTracker({ store: new MemoryQuotaStore(), scheduleOf: () => 'daily' });
 * quotas.track('openai-1', 'openai', 100_000);
 * quotas.record('openai-1', 1_250);
 * quotas.snapshot('openai-1'); // { limit: 100000, used: 1250, remaining: 98750, ... }
 * ```
 */
export class QuotaTracker {
  readonly events = new EventEmitter<QuotaTrackerEvents>();
  private readonly store: QuotaStore;
  private readonly scheduler: Scheduler;
  private readonly scheduleOf: (provider: string) => ResetSchedule | undefined;
  private readonly providerLimitOf: (provider: string) => number | undefined;
  private readonly stopTimeoutMs: number;
  private readonly admissions: QuotaAdmissionControl;
  private readonly flusher: QuotaFlusher;
  private readonly entries = new Map<string, QuotaEntry>();
  /** The entries of each provider: a provider's figure is asked for after every request (the routing table's quota feed). */
  private readonly byProvider = new Map<string, Set<QuotaEntry>>();
  private readonly stored = new Map<string, QuotaUsage>();
  private readonly resetTimers = new Map<ResetSchedule, () => void>();
  private stopped = false;
  private unwatch: (() => void) | undefined;
  /** Announcements heard so far: tells an answer that an announcement overtook from one that is simply newer. */
  private announcements = 0;

  constructor(options: QuotaTrackerOptions) {
    this.store = options.store;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.scheduleOf = options.scheduleOf ?? (() => undefined);
    this.providerLimitOf = options.providerLimitOf ?? (() => undefined);
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    const isTracked = (entry: QuotaEntry) => this.entries.get(entry.id) === entry;
    const batchSize = options.flushBatchSize === undefined ? undefined : Math.max(1, Math.floor(options.flushBatchSize));
    this.flusher = new QuotaFlusher(
      this.store,
      this.scheduler,
      options.flushIntervalMs ?? 1000,
      {
        entries: () => this.entries.values(),
        isTracked,
        stored: (id, usage) => this.stored.set(id, usage),
        announcements: () => this.announcements,
        changed: (entry) => this.evaluate(entry, true),
        failed: (error, pendingCredentials) => this.events.emit('quota:flush_failed', { error, pendingCredentials }),
      },
      batchSize,
    );
    const settings = {
      ttlMs: options.reservationTtlMs ?? 10 * 60_000,
      timeoutMs: options.reserveTimeoutMs ?? 5000,
      backoffMs: options.reserveBackoffMs ?? 5000,
    };
    this.admissions = new QuotaAdmissionControl(this.store, this.scheduler, settings, {
      heard: (total) => this.heard(total),
      isTracked,
      flushSoon: () => this.flusher.soon(),
      leftover: (delta) => this.flusher.leftover(delta),
      abandon: (request) => this.flusher.abandon(request),
      failed: (error, credentialId) => this.events.emit('quota:reserve_failed', { error, credentialId }),
    });
  }

  /** Loads stored usage; call before tracking credentials. */
  async load(): Promise<void> {
    for (const [id, usage] of await this.store.load()) this.stored.set(id, usage);
  }

  /**
   * Starts tracking a credential, or updates its provider and limit.
   * `seed` is the usage its record carries, used when the store has none.
   */
  track(id: string, provider: string, limit: number | null, seed?: QuotaUsage): void {
    const existing = this.entries.get(id);
    if (existing) {
      this.rollOverIfDue(existing);
      if (existing.provider !== provider) {
        this.unindex(existing);
        existing.provider = provider;
        this.index(existing);
      }
      existing.limit = limit;
      if (this.scheduleOf(provider) !== existing.schedule) this.applySchedule(existing);
      this.evaluate(existing, true);
      return;
    }
    const usage = this.stored.get(id) ?? seed;
    const entry = newEntry(id, provider, limit);
    this.entries.set(id, entry);
    this.index(entry);
    this.applySchedule(entry);
    // Usage from an earlier period does not count in this one.
    const usagePeriod = usage?.period_start ? Date.parse(usage.period_start) : null;
    if (usage && (entry.periodStart === null || usagePeriod === entry.periodStart)) {
      entry.used = usage.used;
      entry.storedTotal = usage.used;
    }
    this.evaluate(entry, false);
  }

  /** Stops tracking a credential (it was deleted) and forgets its stored usage. */
  untrack(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.unindex(entry);
    this.stored.delete(id);
    void this.store.remove(id).catch(() => undefined);
  }

  /** Changes a credential's limit (null: unlimited). */
  setLimit(id: string, limit: number | null): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.limit = limit;
    this.evaluate(entry, true);
  }

  /**
   * Counts `tokens` against a credential. Synchronous; the store write
   * happens at the next flush. Returns true when the credential is now
   * exhausted.
   */
  record(id: string, tokens: number, reservation?: string): boolean {
    const entry = this.entries.get(id);
    if (!entry) return false;
    if (reservation !== undefined) this.admissions.settle(entry, reservation);
    if (!(tokens > 0)) return entry.exhausted;
    this.rollOverIfDue(entry);
    const whole = Math.ceil(tokens);
    entry.used += whole;
    entry.pending += whole;
    entry.perRequest = entry.perRequest === 0 ? whole : entry.perRequest * 0.8 + whole * 0.2;
    this.evaluate(entry, true);
    this.flusher.reported();
    return entry.exhausted;
  }

  /**
   * Cluster mode (a store that can `reserve`): holds room in the shared
   * quota for one request before it goes upstream. The request holds this
   * node's recent tokens per request, or `estimate` (what the caller
   * guesses from the request itself) when that is more, until `record` or
   * `release` settles it; the store refuses when committed use plus every open reservation,
   * on any node, has reached the limit. Returns undefined when nothing needs
   * holding (no limit, or a store of one process), so callers pay for an
   * await only in cluster mode.
   *
   * A store that fails or does not answer within `reserveTimeoutMs` admits
   * (availability over exactness; `quota:reserve_failed` tells), and the
   * next `reserveBackoffMs` of requests go ahead without asking: their
   * tokens are still added once the store is back.
   */
  admit(id: string, estimate = 0): Promise<QuotaAdmission> | undefined {
    const entry = this.entries.get(id);
    // Asked before every attempt: a credential without a limit, or a store of one process, costs nothing more.
    if (!entry || entry.limit === null || !this.store.reserve) return undefined;
    this.rollOverIfDue(entry);
    const tokens = Math.max(Math.ceil(entry.perRequest), Number.isSafeInteger(estimate) && estimate > 0 ? estimate : 0);
    return this.admissions.admit(entry, tokens);
  }

  /**
   * Requests let through without a reservation, decided here rather than by
   * the store: `stalled` (the store did not answer in time) and `skipped`
   * (within the backoff after a failure or a stall). The store counts its
   * own answers.
   */
  admissionCounts(): AdmissionCounts {
    return { ...this.admissions.counts };
  }

  /** Lets go of a reservation whose request used no tokens (it failed, or was refused upstream). */
  release(id: string, reservation: string): void {
    const entry = this.entries.get(id);
    if (entry) this.admissions.settle(entry, reservation);
  }

  /**
   * Marks a credential exhausted because the upstream said so. Returns when
   * that ends (epoch ms): its next reset, or undefined without a schedule.
   */
  markExhausted(id: string): number | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    entry.forced = true;
    this.evaluate(entry, true);
    return Number.isFinite(entry.periodEnd) ? entry.periodEnd : undefined;
  }

  /** Whether a credential has no quota left in this period. */
  isExhausted(id: string): boolean {
    const entry = this.entries.get(id);
    if (!entry) return false;
    this.rollOverIfDue(entry);
    return entry.exhausted;
  }

  /** Starts a fresh period for a credential now (an operator's reset). */
  async reset(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.used = 0;
    entry.pending = 0;
    entry.storedTotal = 0;
    entry.forced = false;
    const period = periodIso(entry);
    await this.store.set(id, { used: 0, period_start: period });
    this.evaluate(entry, true);
    this.events.emit('quota:reset', { provider: entry.provider, credentialId: id });
  }

  /** The quota view of a credential. */
  snapshot(id: string): QuotaStatus {
    const entry = this.entries.get(id);
    if (!entry) return { limit: null, used: 0, remaining: null, period_start: null, resets_at: null };
    this.rollOverIfDue(entry);
    return {
      limit: entry.limit,
      used: entry.used,
      remaining: remainingOf(entry.limit, entry.used),
      period_start: periodIso(entry),
      resets_at: Number.isFinite(entry.periodEnd) ? new Date(entry.periodEnd).toISOString() : null,
    };
  }

  private index(entry: QuotaEntry): void {
    let entries = this.byProvider.get(entry.provider);
    if (!entries) this.byProvider.set(entry.provider, (entries = new Set()));
    entries.add(entry);
  }

  private unindex(entry: QuotaEntry): void {
    const entries = this.byProvider.get(entry.provider);
    entries?.delete(entry);
    if (entries?.size === 0) this.byProvider.delete(entry.provider);
  }

  /**
   * A provider's quota: its configured limit (`providers.<p>.quota.limit`),
   * else the sum of its credentials' limits (null when any is unlimited),
   * and the sum of their usage.
   */
  providerQuota(provider: string): { limit: number | null; used: number; remaining: number | null } {
    let used = 0;
    let sum: number | null = 0;
    for (const entry of this.byProvider.get(provider) ?? []) {
      this.rollOverIfDue(entry);
      used += entry.used;
      sum = sum === null || entry.limit === null ? null : sum + entry.limit;
    }
    const limit = this.providerLimitOf(provider) ?? sum;
    return { limit, used, remaining: remainingOf(limit, used) };
  }

  /** Writes pending usage to the store now, and takes the store's totals. */
  flush(): Promise<void> {
    return this.flusher.flush();
  }

  /** Arms the reset timers and subscribes to the store's totals; call once after loading. */
  start(): void {
    this.stopped = false;
    this.flusher.stopped = false;
    this.unwatch ??= this.store.watch?.((total) => this.heard(total));
    for (const schedule of ['daily', 'monthly'] as const) this.armReset(schedule);
  }

  /**
   * Cancels timers, waits (at most `stopTimeoutMs`) for requests holding or
   * asking for a reservation to settle, and writes what is pending. Records
   * that arrive afterwards are written at once, one write each.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.flusher.stopped = true;
    this.unwatch?.();
    this.unwatch = undefined;
    for (const cancel of this.resetTimers.values()) cancel();
    this.resetTimers.clear();
    this.flusher.cancel();
    // A reservation not settled at shutdown would hold room in the shared quota for its ttl (minutes), and its
    // usage would never be written: wait for those requests, but not forever.
    await this.admissions.drain(() => this.unsettled(), this.stopTimeoutMs);
    await this.flush();
  }

  /** Re-reads every credential's schedule (after a config reload). */
  reschedule(): void {
    for (const entry of this.entries.values()) {
      const before = entry.schedule;
      this.applySchedule(entry);
      if (before !== entry.schedule) this.evaluate(entry, true);
    }
  }

  // ---- internals -------------------------------------------------------

  /**
   * A total the store committed (any node's). Raises the local count to it
   * plus what is counted here but not yet written; a `replaced` total sets
   * it (a reset elsewhere). Totals of another period are ignored.
   */
  private heard(total: QuotaTotal): void {
    const entry = this.entries.get(total.id);
    if (!entry) return;
    this.rollOverIfDue(entry);
    if (total.period_start !== periodIso(entry)) return;
    let used: number;
    if (total.replaced) {
      entry.announcedAt = ++this.announcements;
      entry.storedTotal = total.used;
      used = total.used + entry.pending;
    } else {
      if (total.used <= entry.storedTotal) return;
      entry.announcedAt = ++this.announcements;
      entry.storedTotal = total.used;
      // Never below the local count: it may include tokens of a write this total does not.
      used = Math.max(entry.used, total.used + entry.pending);
    }
    this.stored.set(entry.id, { used: total.used, period_start: total.period_start });
    if (used !== entry.used) {
      entry.used = used;
      this.evaluate(entry, true);
    }
  }

  private applySchedule(entry: QuotaEntry): void {
    const schedule = this.scheduleOf(entry.provider);
    const now = this.scheduler.now();
    entry.storedTotal = 0;
    entry.schedule = schedule;
    entry.periodStart = schedule ? periodStart(schedule, now) : null;
    entry.periodEnd = schedule ? nextPeriodStart(schedule, now) : Number.POSITIVE_INFINITY;
  }

  /** Starts the next period if the clock has passed the end of this one. */
  private rollOverIfDue(entry: QuotaEntry): void {
    if (this.scheduler.now() < entry.periodEnd) return;
    const hadUsage = entry.used > 0 || entry.forced;
    if (entry.pending > 0 || entry.releases.length > 0) {
      // These tokens belong to the period that ended: they are stored under it, never counted in the new one.
      const ended = periodIso(entry);
      this.flusher.leftover({ id: entry.id, tokens: entry.pending, period_start: ended, ...releasesOf(entry) });
      entry.pending = 0;
    }
    this.applySchedule(entry);
    entry.used = 0;
    entry.forced = false;
    this.evaluate(entry, true);
    if (hadUsage) this.events.emit('quota:reset', { provider: entry.provider, credentialId: entry.id });
  }

  private evaluate(entry: QuotaEntry, announce: boolean): void {
    const wasExhausted = entry.exhausted;
    entry.exhausted = entry.forced || (entry.limit !== null && entry.used >= entry.limit);
    if (!announce) return;
    this.events.emit('quota:update', {
      provider: entry.provider,
      credentialId: entry.id,
      limit: entry.limit,
      used: entry.used,
      remaining: remainingOf(entry.limit, entry.used),
    });
    if (entry.exhausted && !wasExhausted) {
      this.events.emit('quota:exhausted', {
        provider: entry.provider,
        credentialId: entry.id,
        resetsAt: Number.isFinite(entry.periodEnd) ? entry.periodEnd : null,
      });
    }
  }

  private armReset(schedule: ResetSchedule): void {
    if (this.stopped) return;
    const at = nextPeriodStart(schedule, this.scheduler.now());
    this.resetTimers.set(
      schedule,
      scheduleAt(this.scheduler, at, () => {
        for (const entry of this.entries.values()) if (entry.schedule === schedule) this.rollOverIfDue(entry);
        this.armReset(schedule);
      }),
    );
  }

  /** Whether a request still holds a reservation here, or is waiting for the store to answer one. */
  private unsettled(): boolean {
    if (this.admissions.asking > 0) return true;
    for (const entry of this.entries.values()) if (entry.open.size > 0) return true;
    return false;
  }
}
