/**
 * @module time
 * Time arithmetic the credentials package needs, all on an injected clock:
 * UTC reset periods for quotas, timers that may lie weeks ahead, and
 * config durations (`100ms`, `30s`, `5m`).
 */
import { durationMs, type Scheduler } from '@switchyard/runtime';
import { CredentialsError } from '../errors.js';

/** How often a quota resets: at 00:00 UTC each day, or on the 1st of each month. */
export type ResetSchedule = 'daily' | 'monthly';

/** Start (epoch ms) of the UTC period that contains `nowMs`. */
export function periodStart(schedule: ResetSchedule, nowMs: number): number {
  const d = new Date(nowMs);
  return schedule === 'daily'
    ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** Start (epoch ms) of the UTC period after the one that contains `nowMs`. */
export function nextPeriodStart(schedule: ResetSchedule, nowMs: number): number {
  const d = new Date(periodStart(schedule, nowMs));
  return schedule === 'daily'
    ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Longest single wait: Node fires timers beyond 2^31-1 ms at once, and a month is longer than that. */
const MAX_TIMER_MS = 24 * 60 * 60_000;

/**
 * Calls `callback` once the scheduler's clock reaches `atMs`, re-arming in
 * steps of at most a day, so far-off times (a monthly reset) work and a
 * clock that jumps is re-read. Returns a cancel function.
 *
 * @example
 * ```ts
 * const cancel = scheduleAt(scheduler, nextPeriodStart('monthly', scheduler.now()), resetQuotas);
 * ```
 */
export function scheduleAt(scheduler: Scheduler, atMs: number, callback: () => void): () => void {
  let cancelled = false;
  let handle: ReturnType<Scheduler['setTimeout']> | undefined;
  const arm = () => {
    if (cancelled) return;
    const wait = atMs - scheduler.now();
    if (wait <= 0) {
      handle = undefined;
      callback();
      return;
    }
    handle = scheduler.setTimeout(arm, Math.min(wait, MAX_TIMER_MS));
  };
  arm();
  return () => {
    cancelled = true;
    if (handle !== undefined) scheduler.clearTimeout(handle);
  };
}

/** Resolves after `ms` on `scheduler`, or rejects with `aborted` when `signal` fires first. */
export function sleep(scheduler: Scheduler, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      scheduler.clearTimeout(handle);
      reject(abortError(signal!));
    };
    const handle = scheduler.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(signal: AbortSignal): CredentialsError {
  return new CredentialsError('aborted', 'cancelled', { cause: signal.reason });
}

/**
 * Reads a duration written like `100ms`, `30s`, `5m`, `1h30m`, `1d` or `1w`, or a
 * number of milliseconds (also as a string: `"100"`), through the runtime's
 * {@link durationMs}. `field` names the config key in the error.
 *
 * @example
 * ```ts
 * parseDuration('5m', 'auth.refresh.check_interval'); // 300000
 * ```
 */
export function parseDuration(value: string | number, field = 'duration'): number {
  const ms = durationMs(value);
  if (ms !== undefined) return ms;
  throw new CredentialsError('invalid_config', `${field} must be a duration like 100ms, 30s, 5m or 1h`, { field });
}
