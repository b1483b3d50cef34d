/**
 * @module cooldownManager
 * Takes keys (providers, or credentials as `<provider>/<credential>`) out of
 * rotation after repeated failures, and brings them back.
 *
 * - Detection: `errorThreshold` rate limits (or other errors) within
 *   `windowMs` start a cooldown until now + the key's duration (or a later
 *   `Retry-After`), and reset the counters.
 * - Recovery: at the end, at once, the optional health check runs; passing,
 *   the key returns; failing, it stays and is checked again every
 *   `recoveryIntervalMs`. Nothing can leave a key cooling forever once the
 *   upstream is back: an end always leads to a check, a hung check times
 *   out, and `isCooling` itself moves an overdue key along even when no
 *   timer runs.
 * - Sharing: periods are written to a {@link CooldownStateStore}; changes
 *   from other nodes arrive by subscription and are applied to the
 *   in-memory view that `isCooling` reads. The request path never waits on
 *   the store.
 */

import { type Scheduler, systemScheduler, type TimerHandle, withTimeout } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import { errorMessage, RoutingError } from '../errors.js';
import { positiveMs } from '../validate.js';
import {
  DEFAULT_HEALTH_CHECK_TIMEOUT_MS,
  DEFAULT_RECOVERY_INTERVAL_MS,
  DurationTable,
  type ResolvedDetection,
  resolveDetection,
} from './cooldownSettings.js';
import {
  COOLDOWN_REASONS,
  type CooldownEndCause,
  type CooldownPeriod,
  type CooldownReason,
  type CooldownStateStore,
  type CooldownStoreChange,
  MAX_COOLDOWN_NOTE,
  MemoryCooldownStateStore,
  parseCooldownPeriod,
  samePeriod,
} from './cooldownStateStore.js';
import type { CooldownEvents, CooldownFailure, CooldownManagerOptions, CooldownSource, CooldownStatus } from './cooldownTypes.js';
import { FailureWindow } from './failureWindow.js';

/** The longest manual cooldown, in milliseconds: the longest a timer can wait (2^31 − 1 ms, about 24.8 days). */
export const MAX_COOLDOWN_MS = 2 ** 31 - 1;

interface Cooling {
  period: CooldownPeriod;
  /** `waiting` until `dueAt`; `checking` while a health check runs. */
  phase: 'waiting' | 'checking';
  dueAt: number;
  timer: TimerHandle | undefined;
  failedChecks: number;
  /** Bumped whenever the entry changes, so a late health check result is ignored. */
  generation: number;
}

interface Counters {
  rateLimits: FailureWindow;
  errors: FailureWindow;
  /** The latest end any `Retry-After` asked for. */
  retryUntil: number;
  /** Automatic cooldowns in a row without a success (for backoff). */
  streak: number;
}

/**
 * Cooldown state for many keys.
 *
 * @example
 * ```ts
 * const cooldowns = new CooldownManager({ detection: { errorThreshold: 3 }, durations: { openai: { rateLimitMs: 60_000 } } });
 * cooldowns.start();
 * if (!cooldowns.isCooling('openai')) {
 *   const res = await fetch(url);
 *   if (res.status === 429) cooldowns.recordFailure('openai', { kind: 'rate_limit', status: 429 });
 *   else cooldowns.recordSuccess('openai');
 * }
 * ```
 */
export class CooldownManager {
  readonly events = new EventEmitter<CooldownEvents>();
  private readonly scheduler: Scheduler;
  private readonly store: CooldownStateStore;
  private detection: ResolvedDetection;
  private durations: DurationTable;
  private healthCheck: ((key: string) => Promise<boolean>) | undefined;
  private recoveryIntervalMs: number;
  private healthCheckTimeoutMs: number;
  private readonly cooling = new Map<string, Cooling>();
  private readonly counters = new Map<string, Counters>();
  private running = false;
  private unsubscribe: (() => void) | undefined;
  private writes: Promise<void> = Promise.resolve();
  /** Sequence number of the last transition of each key, so a slow `list()` cannot undo a newer change. */
  private readonly changedAt = new Map<string, number>();
  private changes = 0;

  constructor(options: CooldownManagerOptions = {}) {
    this.scheduler = options.scheduler ?? systemScheduler;
    this.store = options.store ?? new MemoryCooldownStateStore();
    this.detection = resolveDetection(options.detection);
    this.durations = new DurationTable(options.durations, options.defaultDurations);
    this.healthCheck = options.healthCheck;
    this.recoveryIntervalMs = positiveMs(options.recoveryIntervalMs ?? DEFAULT_RECOVERY_INTERVAL_MS, 'recoveryIntervalMs');
    this.healthCheckTimeoutMs = positiveMs(options.healthCheckTimeoutMs ?? DEFAULT_HEALTH_CHECK_TIMEOUT_MS, 'healthCheckTimeoutMs');
  }

  /** Records a successful request: ends the backoff streak of `key`. O(1). */
  recordSuccess(key: string): void {
    const counters = this.counters.get(key);
    if (counters !== undefined) counters.streak = 0;
  }

  /**
   * Records a failed request. O(1). Returns the period when this failure
   * started one. While `key` is cooling, failures (requests sent before the
   * cooldown) are not counted, but a later `Retry-After` extends the end.
   */
  recordFailure(key: string, failure: CooldownFailure): CooldownPeriod | undefined {
    checkKey(key);
    const kind = failure?.kind;
    if (kind !== 'rate_limit' && kind !== 'error')
      throw new RoutingError('invalid_argument', "failure.kind must be 'rate_limit' or 'error'");
    const retryAfterMs = failure.retryAfterMs;
    if (retryAfterMs !== undefined && !(typeof retryAfterMs === 'number' && retryAfterMs >= 0 && retryAfterMs < Number.POSITIVE_INFINITY)) {
      throw new RoutingError('invalid_argument', 'failure.retryAfterMs must be a finite number ≥ 0');
    }
    const endsBy = failure.endsBy;
    if (endsBy !== undefined && !(typeof endsBy === 'number' && Number.isFinite(endsBy))) {
      throw new RoutingError('invalid_argument', 'failure.endsBy must be a finite epoch time in milliseconds');
    }
    if (!this.detection.enabled) return undefined;
    const durations = this.durations.of(key);
    if (!durations.enabled) return undefined;
    const now = this.scheduler.now();
    const retryUntil = retryAfterMs === undefined ? 0 : now + Math.min(retryAfterMs, durations.maxRetryAfterMs);
    if (this.isCooling(key)) {
      const current = this.cooling.get(key)!;
      if (retryUntil > current.period.endsAt) this.replace(current, { ...current.period, endsAt: retryUntil }, 'local');
      return undefined;
    }
    const counters = this.countersOf(key);
    if (retryUntil > counters.retryUntil) counters.retryUntil = retryUntil;
    const window = kind === 'rate_limit' ? counters.rateLimits : counters.errors;
    if (!window.record(now, this.detection.windowMs)) return undefined;

    const base = kind === 'rate_limit' ? durations.rateLimitMs : durations.errorMs;
    const backedOff = Math.min(base * durations.backoffMultiplier ** counters.streak, Math.max(base, durations.backoffMaxMs));
    const endsAt = Math.min(
      Math.max(now + backedOff, counters.retryUntil),
      endsBy === undefined ? Number.POSITIVE_INFINITY : Math.max(endsBy, now + 1),
    );
    counters.streak++;
    resetCounters(counters);
    return this.begin({ key, reason: kind, startedAt: now, endsAt }, 'local');
  }

  /** Whether `key` is out of rotation. O(1); the request path's check. */
  isCooling(key: string): boolean {
    const entry = this.cooling.get(key);
    if (entry === undefined) return false;
    // Timers normally move a key on; this covers a manager that was never started, or a late timer.
    if (entry.phase === 'waiting' && this.scheduler.now() >= entry.dueAt) this.due(entry);
    return this.cooling.has(key);
  }

  /** The current period of `key`, if it is cooling. */
  period(key: string): CooldownPeriod | undefined {
    return this.isCooling(key) ? this.cooling.get(key)?.period : undefined;
  }

  /**
   * Cools `key` down for `durationMs` from now, replacing any period it is
   * in (an operator's word beats the automatic one). `note` is the
   * operator's own reason, kept with the period and shown in {@link status}.
   */
  cooldown(key: string, durationMs: number, reason: CooldownReason = 'manual', note?: string): CooldownPeriod {
    checkKey(key);
    if (typeof durationMs !== 'number' || !Number.isFinite(durationMs) || durationMs <= 0) {
      throw new RoutingError('invalid_argument', 'durationMs must be a positive, finite number of milliseconds');
    }
    // Longer than a timer can wait: Node would fire it at once, ending the cooldown the moment it began.
    if (durationMs > MAX_COOLDOWN_MS) {
      throw new RoutingError('invalid_argument', `durationMs must be at most ${MAX_COOLDOWN_MS} (about 24 days)`);
    }
    if (!COOLDOWN_REASONS.includes(reason))
      throw new RoutingError('invalid_argument', `reason must be one of ${COOLDOWN_REASONS.join(', ')}`);
    const now = this.scheduler.now();
    if (note !== undefined && (typeof note !== 'string' || note.length > MAX_COOLDOWN_NOTE))
      throw new RoutingError('invalid_argument', `note must be a string of at most ${MAX_COOLDOWN_NOTE} characters`);
    const period: CooldownPeriod = { key, reason, startedAt: now, endsAt: now + durationMs, ...(note ? { note } : {}) };
    const current = this.cooling.get(key);
    return current ? this.replace(current, period, 'local') : this.begin(period, 'local');
  }

  /** Forced recovery: `key` returns now, its failure counts cleared. False if it was not cooling. */
  recover(key: string): boolean {
    const entry = this.cooling.get(key);
    const counters = this.counters.get(key);
    if (counters) resetCounters(counters);
    if (!entry) return false;
    this.finish(entry, 'recover', 'local');
    return true;
  }

  /** Every cooling key, for the operations API. Keys are sorted. */
  status(): CooldownStatus {
    const now = this.scheduler.now();
    const keys = [...this.cooling.keys()].filter((key) => this.isCooling(key)).sort();
    const periods: CooldownStatus['cooldown_periods'] = {};
    for (const key of keys) {
      const { period, failedChecks, phase } = this.cooling.get(key)!;
      Object.defineProperty(periods, key, {
        enumerable: true,
        value: {
          started_at: new Date(period.startedAt).toISOString(),
          ends_at: new Date(period.endsAt).toISOString(),
          // The operator's reason when one was given, else the kind (rate_limit, error, manual).
          reason: period.note ?? period.reason,
          kind: period.reason,
          remaining_seconds: Math.max(0, Math.ceil((period.endsAt - now) / 1000)),
          awaiting_health_check: phase === 'checking' || now >= period.endsAt,
          failed_checks: failedChecks,
        },
      });
    }
    return { providers_in_cooldown: keys, cooldown_periods: periods };
  }

  /**
   * Hot reload. Detection settings merge into the current ones; `durations`
   * and `defaultDurations` replace theirs and apply to cooldowns that start
   * from now on (running periods keep their end), except that a key whose
   * automatic cooldowns are switched off leaves its automatic cooldown now.
   * Everything is checked before anything changes.
   */
  configure(options: Partial<CooldownManagerOptions>): void {
    if (options.scheduler !== undefined || options.store !== undefined) {
      throw new RoutingError('invalid_config', 'scheduler and store cannot be changed by configure(); create a new CooldownManager');
    }
    const detection = resolveDetection(options.detection, this.detection);
    const durations =
      'durations' in options || 'defaultDurations' in options
        ? new DurationTable(options.durations, options.defaultDurations)
        : this.durations;
    const recoveryIntervalMs =
      options.recoveryIntervalMs === undefined ? this.recoveryIntervalMs : positiveMs(options.recoveryIntervalMs, 'recoveryIntervalMs');
    const timeoutMs =
      options.healthCheckTimeoutMs === undefined
        ? this.healthCheckTimeoutMs
        : positiveMs(options.healthCheckTimeoutMs, 'healthCheckTimeoutMs');
    this.detection = detection;
    this.durations = durations;
    this.recoveryIntervalMs = recoveryIntervalMs;
    this.healthCheckTimeoutMs = timeoutMs;
    if ('healthCheck' in options) this.healthCheck = options.healthCheck;
    for (const counters of this.counters.values()) {
      counters.rateLimits.resize(detection.errorThreshold);
      counters.errors.resize(detection.errorThreshold);
    }
    for (const entry of [...this.cooling.values()]) {
      if (entry.period.reason !== 'manual' && !durations.of(entry.period.key).enabled) this.finish(entry, 'recover', 'local');
    }
  }

  /** Starts the recovery timers and applies changes from the shared store (loading it first). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.store.subscribe((change) => this.apply(change));
    for (const entry of this.cooling.values()) this.schedule(entry);
    this.sync().catch(() => {
      // Reported as a `cooldown:store_error` event by sync().
    });
  }

  /** Stops the timers and the store subscription. Cooling keys stay cooling; `isCooling` still ends them when due. */
  stop(): void {
    this.running = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const entry of this.cooling.values()) this.unschedule(entry);
  }

  /**
   * Loads every period from the shared store into the in-memory view. A key
   * that changed while the list was loading keeps its newer state.
   */
  async sync(): Promise<void> {
    const since = this.changes;
    let periods: CooldownPeriod[];
    try {
      periods = await this.store.list();
    } catch (error) {
      this.storeError('list', undefined, error);
      throw error;
    }
    for (const period of periods) {
      if ((this.changedAt.get(period?.key) ?? -1) <= since) this.apply({ type: 'set', period });
    }
  }

  /** Resolves when every write so far has reached the store. */
  flush(): Promise<void> {
    return this.writes;
  }

  // ---- transitions --------------------------------------------------------

  private begin(period: CooldownPeriod, source: CooldownSource): CooldownPeriod {
    const frozen = Object.freeze({ ...period });
    const entry: Cooling = { period: frozen, phase: 'waiting', dueAt: frozen.endsAt, timer: undefined, failedChecks: 0, generation: 0 };
    this.cooling.set(frozen.key, entry);
    this.changedAt.set(frozen.key, ++this.changes);
    if (source === 'local') this.write('set', frozen.key, () => this.store.set(frozen));
    this.schedule(entry);
    // Events last: a throwing listener must not leave the state half changed.
    this.events.emit('cooldown:start', { ...frozen, source });
    return frozen;
  }

  private replace(entry: Cooling, period: CooldownPeriod, source: CooldownSource): CooldownPeriod {
    const previous = entry.period;
    const frozen = Object.freeze({ ...period });
    entry.period = frozen;
    entry.phase = 'waiting';
    entry.dueAt = frozen.endsAt;
    entry.generation++;
    this.changedAt.set(frozen.key, ++this.changes);
    if (source === 'local') this.write('set', frozen.key, () => this.store.set(frozen));
    this.schedule(entry);
    this.events.emit('cooldown:update', { period: frozen, previous, source });
    return frozen;
  }

  private finish(entry: Cooling, endedBy: CooldownEndCause, source: CooldownSource): void {
    const { period } = entry;
    if (this.cooling.get(period.key) !== entry) return;
    this.cooling.delete(period.key);
    this.changedAt.set(period.key, ++this.changes);
    this.unschedule(entry);
    entry.generation++;
    if (source === 'local') this.write('delete', period.key, () => this.store.delete(period.key, { ifMatches: period, endedBy }));
    this.events.emit('cooldown:end', { key: period.key, reason: period.reason, endedBy, at: this.scheduler.now(), source });
  }

  /** The end (or the next re-check) has come: return the key, or ask the health check. */
  private due(entry: Cooling): void {
    const check = this.healthCheck;
    if (check === undefined) {
      this.finish(entry, 'expiry', 'local');
      return;
    }
    entry.phase = 'checking';
    const generation = ++entry.generation;
    const key = entry.period.key;
    withTimeout(this.scheduler, this.healthCheckTimeoutMs, 'health check', () => check(key))
      .then(
        (ok) => (ok === true ? undefined : 'the health check reported the upstream unhealthy'),
        (error: unknown) => errorMessage(error),
      )
      .then((failure) => {
        if (this.cooling.get(key) !== entry || entry.generation !== generation) return;
        if (failure === undefined) {
          this.finish(entry, 'health_check', 'local');
          return;
        }
        entry.failedChecks++;
        entry.phase = 'waiting';
        entry.dueAt = this.scheduler.now() + this.recoveryIntervalMs;
        this.schedule(entry);
        this.events.emit('cooldown:check_failed', {
          key,
          at: this.scheduler.now(),
          error: failure,
          failedChecks: entry.failedChecks,
          nextCheckAt: entry.dueAt,
        });
      });
  }

  /** Applies a change from the shared store to the in-memory view. */
  private apply(change: CooldownStoreChange): void {
    let period: CooldownPeriod;
    try {
      period = parseCooldownPeriod(change?.period, 'store change period');
    } catch (error) {
      this.storeError('apply', undefined, error);
      return;
    }
    const entry = this.cooling.get(period.key);
    if (change.type === 'set') {
      if (entry === undefined) this.begin(period, 'remote');
      else if (!samePeriod(entry.period, period)) this.replace(entry, period, 'remote');
    } else if (change.type === 'delete' && entry !== undefined && samePeriod(entry.period, period)) {
      // Only the period this node holds; a newer local one is still on its way to the store.
      this.finish(entry, change.endedBy, 'remote');
    }
  }

  // ---- plumbing -------------------------------------------------------------

  private schedule(entry: Cooling): void {
    this.unschedule(entry);
    if (!this.running || entry.phase !== 'waiting') return;
    entry.timer = this.scheduler.setTimeout(
      () => {
        entry.timer = undefined;
        if (this.cooling.get(entry.period.key) === entry && entry.phase === 'waiting') this.due(entry);
      },
      Math.max(0, entry.dueAt - this.scheduler.now()),
    );
  }

  private unschedule(entry: Cooling): void {
    if (entry.timer === undefined) return;
    this.scheduler.clearTimeout(entry.timer);
    entry.timer = undefined;
  }

  private countersOf(key: string): Counters {
    let counters = this.counters.get(key);
    const threshold = this.detection.errorThreshold;
    if (counters === undefined) {
      counters = { rateLimits: new FailureWindow(threshold), errors: new FailureWindow(threshold), retryUntil: 0, streak: 0 };
      this.counters.set(key, counters);
    }
    return counters;
  }

  /** Store writes run one after another, in the order the transitions happened. */
  private write(operation: 'set' | 'delete', key: string, run: () => Promise<unknown>): void {
    this.writes = this.writes.then(run).then(
      () => undefined,
      (error: unknown) => this.storeError(operation, key, error),
    );
  }

  private storeError(operation: 'set' | 'delete' | 'list' | 'apply', key: string | undefined, error: unknown): void {
    const at = this.scheduler.now();
    this.events.emit(
      'cooldown:store_error',
      key === undefined ? { operation, error: errorMessage(error), at } : { operation, key, error: errorMessage(error), at },
    );
  }
}

function resetCounters(counters: Counters): void {
  counters.rateLimits.reset();
  counters.errors.reset();
  counters.retryUntil = 0;
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) throw new RoutingError('invalid_argument', 'key must be a non-empty string');
}
