/**
 * @module quotaAdmissionControl
 * Admission against a quota shared by several nodes, for a store that can
 * `reserve` (PostgreSQL): before a request goes upstream it holds an
 * estimate of its tokens in the store, and the store refuses once committed
 * use plus every node's open reservations has reached the limit. The write
 * that adds a request's tokens lets its reservation go (the tracker's
 * flush, with the entry's `releases`).
 *
 * The request path never waits on a stalled database: an admission gives up
 * once the store has answered nothing for `timeoutMs`, and the request goes
 * ahead without a reservation; for `backoffMs` after a failure or a stall no
 * admission asks at all. A store that is slow but answering (a burst queued
 * on one credential's row) is waited for: giving up there would trade
 * exactness for nothing, since the store is alive.
 */
import { randomUUID } from 'node:crypto';
import type { Scheduler } from '@switchyard/core-routing';
import type { QuotaDelta, QuotaReservationAnswer, QuotaStore, QuotaTotal } from '../store/quotaStore.js';
import { periodIso, type QuotaAdmission, type QuotaEntry } from './quotaEntry.js';

/** What admission control needs from its tracker. */
export interface AdmissionHooks {
  /** The store's committed use, read by a reservation: news like an announcement. */
  heard(total: QuotaTotal): void;
  /** Whether the entry is still the tracked one (the credential was not removed meanwhile). */
  isTracked(entry: QuotaEntry): boolean;
  /** A release is waiting to be written. */
  flushSoon(): void;
  /** A delta to write for an entry no longer tracked. */
  leftover(delta: QuotaDelta): void;
  failed(error: unknown, credentialId: string): void;
}

/** Timing of admissions. */
export interface AdmissionSettings {
  ttlMs: number;
  timeoutMs: number;
  backoffMs: number;
}

/** Reserves and settles requests' room in a shared quota; one per tracker. */
export class QuotaAdmissionControl {
  /** Until when admissions skip the store, after it failed or stalled (epoch ms). */
  private downUntil = 0;
  /** When the store last answered a reservation (epoch ms): tells a stalled store from a busy one. */
  private lastAnswerAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: QuotaStore,
    private readonly scheduler: Scheduler,
    private readonly settings: AdmissionSettings,
    private readonly hooks: AdmissionHooks,
  ) {}

  /**
   * Asks the store for room for one request of `tokens`, or undefined when
   * nothing needs asking: no limit, a store of one process, or a store that
   * failed within the backoff.
   */
  admit(entry: QuotaEntry, tokens: number): Promise<QuotaAdmission> | undefined {
    if (entry.limit === null || !this.store.reserve || this.downUntil > this.scheduler.now()) return undefined;
    return this.reserve(entry, entry.limit, tokens);
  }

  /** A reservation's request is over: it is let go with the next write (idempotent). */
  settle(entry: QuotaEntry, reservation: string): void {
    if (!entry.open.delete(reservation)) return;
    entry.releases.push(reservation);
    this.hooks.flushSoon();
  }

  private async reserve(entry: QuotaEntry, limit: number, tokens: number): Promise<QuotaAdmission> {
    const reservation = randomUUID();
    const period = periodIso(entry);
    let answer: QuotaReservationAnswer;
    let timer: ReturnType<Scheduler['setTimeout']> | undefined;
    try {
      const asked = this.store.reserve!({ id: entry.id, reservation, tokens, limit, period_start: period, ttlMs: this.settings.ttlMs });
      asked.then(
        () => (this.lastAnswerAt = this.scheduler.now()),
        () => undefined, // a late failure, after the wait gave up, has no one to tell
      );
      const stalled = new Promise<never>((_, reject) => {
        const check = () => {
          // Answers to other reservations within the interval: the store is busy, not stalled; keep waiting.
          if (this.scheduler.now() - this.lastAnswerAt < this.settings.timeoutMs) {
            timer = this.scheduler.setTimeout(check, this.settings.timeoutMs);
            return;
          }
          reject(new Error(`the quota store answered nothing for ${this.settings.timeoutMs} ms`));
        };
        timer = this.scheduler.setTimeout(check, this.settings.timeoutMs);
      });
      answer = await Promise.race([asked, stalled]);
    } catch (error) {
      this.downUntil = this.scheduler.now() + this.settings.backoffMs;
      // The store may still record it late: let it go with the next write, so it never holds room for its ttl.
      if (this.hooks.isTracked(entry)) {
        entry.releases.push(reservation);
        this.hooks.flushSoon();
      }
      this.hooks.failed(error, entry.id);
      return { admitted: true };
    } finally {
      if (timer !== undefined) this.scheduler.clearTimeout(timer);
    }
    this.hooks.heard({ id: entry.id, used: answer.used, period_start: period, replaced: false });
    if (!answer.admitted) return { admitted: false, used: answer.used, reserved: answer.reserved, limit };
    if (this.hooks.isTracked(entry)) entry.open.add(reservation);
    else this.hooks.leftover({ id: entry.id, tokens: 0, period_start: period, reservations: [reservation] });
    return { admitted: true, reservation };
  }
}
