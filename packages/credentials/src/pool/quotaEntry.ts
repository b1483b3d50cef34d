/**
 * @module quotaEntry
 * The quota tracker's vocabulary: its options and events, the answer of an
 * admission, and the per-credential entry that the tracker and its
 * admission control share.
 */
import type { Scheduler } from '@switchyard/runtime';
import type { QuotaStore } from '../store/quotaStore.js';
import type { ResetSchedule } from '../util/time.js';

/** A quota change, as emitted on `quota:update`. */
export interface QuotaUpdateEvent {
  provider: string;
  credentialId: string;
  limit: number | null;
  used: number;
  remaining: number | null;
}

/** Events of `QuotaTracker`. */
export interface QuotaTrackerEvents {
  'quota:update': [QuotaUpdateEvent];
  /** The credential has no quota left until `resetsAt` (epoch ms; null without a schedule). */
  'quota:exhausted': [{ provider: string; credentialId: string; resetsAt: number | null }];
  /** A new period began for the credential (or an operator reset it). */
  'quota:reset': [{ provider: string; credentialId: string }];
  /** A batch could not be stored; it is kept and retried at the next flush. */
  'quota:flush_failed': [{ error: unknown; pendingCredentials: number }];
  /** The store could not be asked for a reservation: the request went ahead without one. */
  'quota:reserve_failed': [{ error: unknown; credentialId: string }];
}

/**
 * What `QuotaTracker.admit` decided: go ahead (holding `reservation`,
 * to be settled by `record` or `release`), or no room in the shared quota.
 */
export type QuotaAdmission = { admitted: true; reservation?: string } | { admitted: false; used: number; reserved: number; limit: number };

/** Options of `QuotaTracker`. */
export interface QuotaTrackerOptions {
  store: QuotaStore;
  scheduler?: Scheduler;
  /** The reset schedule of a provider, or undefined for a quota that never resets. */
  scheduleOf?: (provider: string) => ResetSchedule | undefined;
  /** Provider-level limit (`providers.<p>.quota.limit`), when configured. */
  providerLimitOf?: (provider: string) => number | undefined;
  /** How often usage is written to the store (default 1 s; 0 writes after every report, still asynchronously). */
  flushIntervalMs?: number;
  /**
   * Write at once, without waiting for the interval, when this many reports (`record` calls with tokens)
   * are waiting (default: the interval alone decides). The gateway's `batch_processing.max_batch_size`.
   */
  flushBatchSize?: number;
  /** A reservation (`QuotaTracker.admit`) lapses in the store after this long unsettled (default 10 minutes). */
  reservationTtlMs?: number;
  /**
   * How long an admission waits for a store that answers nothing (default
   * 5 s). A store answering other reservations meanwhile (a burst queued on
   * one credential's row) is waited for. After a store failure or a stall
   * this long, requests go ahead without reservations for
   * `reserveBackoffMs` (default 5 s), so a stalled database never stalls
   * the request path.
   */
  reserveTimeoutMs?: number;
  reserveBackoffMs?: number;
  /**
   * How long `stop()` waits for requests holding a reservation (or waiting
   * for one) to settle before its final write (default 10 s), so that their
   * usage and releases are written on a graceful shutdown while a request
   * that never settles cannot hold shutdown up.
   */
  stopTimeoutMs?: number;
}

/** What the tracker keeps per credential. */
export interface QuotaEntry {
  id: string;
  provider: string;
  limit: number | null;
  used: number;
  /** Tokens counted but not yet added to the store. */
  pending: number;
  schedule: ResetSchedule | undefined;
  periodStart: number | null;
  periodEnd: number;
  /** The highest total the store is known to have committed in this period (from answers and announcements). */
  storedTotal: number;
  /** Sequence number of the announcement that last set `storedTotal` (0: none). */
  announcedAt: number;
  /** Upstream said the quota is gone (a 429 `insufficient_quota`), whatever the local count says. */
  forced: boolean;
  exhausted: boolean;
  /** Tokens per request, a moving average: what an admission holds. */
  perRequest: number;
  /** Reservations admitted here and not yet settled. */
  open: Set<string>;
  /** Settled reservations, let go with the next write. */
  releases: string[];
}

/** A credential's entry before anything is known of its usage. */
export function newEntry(id: string, provider: string, limit: number | null): QuotaEntry {
  return {
    id,
    provider,
    limit,
    used: 0,
    pending: 0,
    schedule: undefined,
    periodStart: null,
    periodEnd: Number.POSITIVE_INFINITY,
    storedTotal: 0,
    announcedAt: 0,
    forced: false,
    exhausted: false,
    perRequest: 0,
    open: new Set(),
    releases: [],
  };
}

/** Takes the entry's settled reservations, for the delta that lets them go. */
export function releasesOf(entry: QuotaEntry): { reservations?: string[] } {
  if (entry.releases.length === 0) return {};
  const reservations = entry.releases;
  entry.releases = [];
  return { reservations };
}

/** The entry's period start as the ISO string the store keys periods by. */
export function periodIso(entry: QuotaEntry): string | null {
  return entry.periodStart === null ? null : new Date(entry.periodStart).toISOString();
}
