/**
 * @module cooldownTypes
 * The public shapes of a `CooldownManager`: its options, the failures it
 * records, its typed events and its status for the operations API.
 */
import type { Scheduler } from '@switchyard/runtime';
import type { CooldownDetection, CooldownDurations } from './cooldownSettings.js';
import type { CooldownEndCause, CooldownPeriod, CooldownReason, CooldownStateStore } from './cooldownStateStore.js';

/** Options of {@link CooldownManager}. */
export interface CooldownManagerOptions {
  /** Default `systemScheduler`. */
  scheduler?: Scheduler;
  /** Default a new `MemoryCooldownStateStore`. */
  store?: CooldownStateStore;
  detection?: CooldownDetection;
  /** Per key (provider name, or `<provider>/<credential>`); keys not listed use `defaultDurations`. */
  durations?: Record<string, CooldownDurations>;
  defaultDurations?: CooldownDurations;
  /** Gate of recovery: resolves true when the key may return. Absent: keys return when their end passes. */
  healthCheck?: ((key: string) => Promise<boolean>) | undefined;
  /** Interval between health checks of a key that failed one. Default 30,000. */
  recoveryIntervalMs?: number;
  /** A health check still pending after this counts as failed. Default 10,000. */
  healthCheckTimeoutMs?: number;
}

/** A failure to record: `rate_limit` for a 429, `error` for anything else that counts. */
export interface CooldownFailure {
  kind: 'rate_limit' | 'error';
  /** The upstream's `Retry-After`, in milliseconds (undefined when the response had none). */
  retryAfterMs?: number | undefined;
  /** The HTTP status, for the record. */
  status?: number | undefined;
  /**
   * The latest a cooldown this failure starts may end, as epoch milliseconds: a cap below the backoff
   * when the cause is known to pass sooner (a provider whose credentials are all cooling returns
   * with the first of them). One write to a shared store, where a start and then a cut would be two.
   * An instant, not a duration, so the caller's and this manager's readings of the clock cannot
   * disagree by the time between them.
   */
  endsBy?: number | undefined;
}

/** Whether a change was made by this manager or applied from the shared store. */
export type CooldownSource = 'local' | 'remote';

/** Payload of `cooldown:end`. */
export interface CooldownEndEvent {
  key: string;
  reason: CooldownReason;
  endedBy: CooldownEndCause;
  at: number;
  source: CooldownSource;
}

/** The typed events of a {@link CooldownManager}. */
export interface CooldownEvents {
  'cooldown:start': (period: CooldownPeriod & { source: CooldownSource }) => void;
  /** A running period got a new end: a later `Retry-After`, or a manual cooldown over it. */
  'cooldown:update': (event: { period: CooldownPeriod; previous: CooldownPeriod; source: CooldownSource }) => void;
  'cooldown:end': (event: CooldownEndEvent) => void;
  'cooldown:check_failed': (event: { key: string; at: number; error?: string; failedChecks: number; nextCheckAt: number }) => void;
  /** The shared store failed; the in-memory view carries on. */
  'cooldown:store_error': (event: { operation: 'set' | 'delete' | 'list' | 'apply'; key?: string; error: string; at: number }) => void;
}

/** The operations API's view of cooldowns. */
export interface CooldownStatus {
  providers_in_cooldown: string[];
  cooldown_periods: Record<
    string,
    {
      started_at: string;
      ends_at: string;
      /** The operator's reason for a manual cooldown when one was given, else {@link kind}. */
      reason: string;
      /** What started it: `rate_limit`, `error` or `manual`. */
      kind: CooldownReason;
      remaining_seconds: number;
      /** The end has passed and the key waits for a health check to pass. */
      awaiting_health_check: boolean;
      failed_checks: number;
    }
  >;
}
