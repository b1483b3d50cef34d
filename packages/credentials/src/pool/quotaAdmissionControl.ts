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
 * on one credential's row) is waited for, up to `3 × timeoutMs` for any one
 * admission (a query lost on a dead connection never answers, while others
 * do).
 *
 * An admission given up on may still be recorded by the store later. Its
 * release is sent only once the store has answered it: a release sent
 * earlier could reach the database first, or read a snapshot taken before
 * the late reservation committed, and miss it (it would then hold room for
 * its whole ttl).
 *
 * An admission the store failed may have been recorded all the same: the
 * statement committed and its answer was lost (a dropped connection, a
 * timeout after the commit), or it is still running. Its reservation id was
 * drawn here before asking, so it is abandoned (`QuotaStore.abandon`, sent
 * at once by the flusher): the store lets it go if it is there and refuses
 * it if it comes later, so it holds no room for its ttl.
 */
import { randomUUID } from 'node:crypto';
import type { Scheduler } from '@switchyard/runtime';
import type { QuotaDelta, QuotaReservationAnswer, QuotaReservationRequest, QuotaStore, QuotaTotal } from '../store/quotaStore.js';
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
  /** A reservation whose admission failed without a known outcome, to abandon in the store. */
  abandon(request: QuotaReservationRequest): void;
  failed(error: unknown, credentialId: string): void;
}

/** Admissions decided on this side, without an answer from the store (counted by the tracker's admission control; read them with `CredentialManager.quotaAdmissions()`). */
export interface AdmissionCounts {
  /** The store did not answer in time: the request went ahead without a reservation. */
  stalled: number;
  /** Within the backoff after a failure or a stall: the request went ahead without asking. */
  skipped: number;
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
  /** Admissions waiting for the store: a tracker that stops waits for them, since each may become a reservation to settle. */
  asking = 0;
  /** Set while `drain` waits: checks again on every settle and every answered admission. */
  private draining: (() => void) | undefined;
  /** Requests let through without a reservation on this side: the store stalled, or was skipped within the backoff. */
  readonly counts: AdmissionCounts = { stalled: 0, skipped: 0 };

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
    if (entry.limit === null || !this.store.reserve) return undefined;
    if (this.downUntil > this.scheduler.now()) {
      this.counts.skipped++;
      return undefined;
    }
    return this.reserve(entry, entry.limit, tokens);
  }

  /** A reservation's request is over: it is let go with the next write (idempotent). */
  settle(entry: QuotaEntry, reservation: string): void {
    if (!entry.open.delete(reservation)) return;
    entry.releases.push(reservation);
    this.hooks.flushSoon();
    this.draining?.();
  }

  /**
   * Resolves once `unsettled` (the tracker's view: a request holds a
   * reservation, or `asking` is above 0) turns false, checked at every
   * settle and every answered admission, or after `timeoutMs`, so a request
   * that never settles cannot hold a shutdown up.
   */
  async drain(unsettled: () => boolean, timeoutMs: number): Promise<void> {
    if (!unsettled()) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.scheduler.clearTimeout(timer);
        this.draining = undefined;
        resolve();
      };
      const timer = this.scheduler.setTimeout(done, timeoutMs);
      this.draining = () => {
        if (!unsettled()) done();
      };
    });
  }

  /**
   * An admission given up on: once the store answers it (so the reservation, if any, has committed), a
   * reservation it admitted is let go with the next write. A store that failed it may have recorded it all the
   * same (the answer was lost after the commit): it is abandoned.
   */
  private releaseWhenAnswered(
    entry: QuotaEntry,
    request: QuotaReservationRequest,
    asked: Promise<QuotaReservationAnswer> | undefined,
  ): void {
    const { reservation } = request;
    void asked?.then(
      (late) => {
        if (!late.admitted) return;
        if (this.hooks.isTracked(entry)) {
          entry.releases.push(reservation);
          this.hooks.flushSoon();
        } else this.hooks.leftover({ id: entry.id, tokens: 0, period_start: periodIso(entry), reservations: [reservation] });
      },
      () => this.abandon(request),
    );
  }

  /** A reservation the store failed: the failure may have come after its commit (the answer was lost), so it is abandoned. */
  private abandon(request: QuotaReservationRequest): void {
    if (this.store.abandon) this.hooks.abandon(request);
  }

  private async reserve(entry: QuotaEntry, limit: number, tokens: number): Promise<QuotaAdmission> {
    this.asking++;
    try {
      return await this.ask(entry, limit, tokens);
    } finally {
      this.asking--;
      this.draining?.();
    }
  }

  private async ask(entry: QuotaEntry, limit: number, tokens: number): Promise<QuotaAdmission> {
    // Drawn before asking, so that a reservation whose answer is lost can still be named and let go.
    const reservation = randomUUID();
    const period = periodIso(entry);
    const request: QuotaReservationRequest = { id: entry.id, reservation, tokens, limit, period_start: period, ttlMs: this.settings.ttlMs };
    let answer: QuotaReservationAnswer;
    let timer: ReturnType<Scheduler['setTimeout']> | undefined;
    let stalled = false;
    let asked: Promise<QuotaReservationAnswer> | undefined;
    try {
      asked = this.store.reserve!(request);
      asked.then(
        () => (this.lastAnswerAt = this.scheduler.now()),
        () => undefined, // a late failure, after the wait gave up, has no one to tell
      );
      const { timeoutMs } = this.settings;
      const deadline = this.scheduler.now() + 3 * timeoutMs;
      const gaveUp = new Promise<never>((_, reject) => {
        const giveUp = (message: string) => {
          stalled = true;
          reject(new Error(message));
        };
        const check = () => {
          const now = this.scheduler.now();
          if (now >= deadline) return giveUp(`the quota store did not answer this admission in ${3 * timeoutMs} ms`);
          // Answers to other reservations within the interval: the store is busy, not stalled; keep waiting.
          const quietFor = now - this.lastAnswerAt;
          if (quietFor >= timeoutMs) return giveUp(`the quota store answered nothing for ${timeoutMs} ms`);
          timer = this.scheduler.setTimeout(check, Math.min(timeoutMs - quietFor, deadline - now));
        };
        timer = this.scheduler.setTimeout(check, timeoutMs);
      });
      answer = await Promise.race([asked, gaveUp]);
    } catch (error) {
      this.downUntil = this.scheduler.now() + this.settings.backoffMs;
      // A database error is counted by the store that saw it; a stall, only here.
      if (stalled) {
        this.counts.stalled++;
        this.releaseWhenAnswered(entry, request, asked);
      } else this.abandon(request);
      this.hooks.failed(error, entry.id);
      return { admitted: true };
    } finally {
      if (timer !== undefined) this.scheduler.clearTimeout(timer);
    }
    // The use the store read is news like an announcement; of another period (the store moved on), it is not this one's.
    const usePeriod = answer.period_start === undefined ? period : answer.period_start;
    this.hooks.heard({ id: entry.id, used: answer.used, period_start: usePeriod, replaced: false });
    if (!answer.admitted) return { admitted: false, used: answer.used, reserved: answer.reserved, limit };
    if (this.hooks.isTracked(entry)) entry.open.add(reservation);
    else this.hooks.leftover({ id: entry.id, tokens: 0, period_start: period, reservations: [reservation] });
    return { admitted: true, reservation };
  }
}
