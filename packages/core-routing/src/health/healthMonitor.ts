/**
 * @module healthMonitor
 * Active health checking of providers. A provider turns unhealthy after
 * `unhealthyThreshold` failed probes in a row and healthy again after
 * `healthyThreshold` passed ones; between the two it keeps its status, so
 * one flaky probe does not flap routing. Passive statistics of real requests
 * (`recordRequest`) feed the status record in bounded windows but do not
 * decide health: reacting to request failures is the cooldown manager's job.
 */

import { type Scheduler, systemScheduler, type TimerHandle, withTimeout } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import { errorMessage, ProviderNotFound, RoutingError } from '../errors.js';
import { boolean, definedOnly, integerIn, nameList, positiveMs } from '../validate.js';
import type {
  HealthAggregate,
  HealthCheckResult,
  HealthEvents,
  HealthMonitorOptions,
  HealthProbe,
  HealthRecord,
  HealthSettings,
  HealthStatus,
  ProviderStatusRecord,
} from './healthTypes.js';
import { RequestWindow, UptimeTracker } from './slidingWindows.js';

interface ProviderHealth {
  status: HealthStatus;
  failuresInRow: number;
  passesInRow: number;
  lastCheck: number;
  lastSuccess: number;
  lastError: string | null;
  requests: RequestWindow;
  uptime: UptimeTracker;
  inFlight: Promise<HealthCheckResult> | undefined;
}

const DEFAULTS: Required<HealthSettings> = {
  enabled: true,
  intervalMs: 30_000,
  timeoutMs: 10_000,
  unhealthyThreshold: 3,
  healthyThreshold: 2,
};

/**
 * Probes providers on an interval and keeps their health.
 *
 * @example
 * ```ts
 * const health = new HealthMonitor({
 *   providers: ['openai', 'anthropic'],
 *   probe: async (provider, signal) => {
 *     const res = await fetch(`${baseUrl[provider]}/models`, { signal });
 *     if (!res.ok) throw new Error(`HTTP ${res.status}`);
 *   },
 * });
 * health.events.on('health:change', (e) => console.log(`${e.provider} is ${e.status}`));
 * health.start();
 * ```
 */
export class HealthMonitor {
  readonly events = new EventEmitter<HealthEvents>();
  private readonly scheduler: Scheduler;
  private readonly probe: HealthProbe;
  private readonly cooldowns: { isCooling(key: string): boolean } | undefined;
  private settings: Required<HealthSettings>;
  private readonly states = new Map<string, ProviderHealth>();
  private running = false;
  private timer: TimerHandle | undefined;
  /** Bumped on start/stop/reconfigure, so a round from an old loop schedules no successor. */
  private loop = 0;

  constructor(options: HealthMonitorOptions) {
    if (typeof options?.probe !== 'function') throw new RoutingError('invalid_argument', 'probe must be a function');
    this.scheduler = options.scheduler ?? systemScheduler;
    this.probe = options.probe;
    this.cooldowns = options.cooldowns;
    this.settings = resolveSettings(options.settings, DEFAULTS);
    this.setProviders(options.providers);
  }

  /** The watched providers, in the order given. */
  get providers(): string[] {
    return [...this.states.keys()];
  }

  /** Whether `provider` is healthy. O(1). Unknown providers are not; with checking disabled, every known one is. */
  isHealthy(provider: string): boolean {
    const state = this.states.get(provider);
    return state !== undefined && (state.status === 'healthy' || !this.settings.enabled);
  }

  /** Records one real request's outcome, for the status record. O(1); unknown providers are ignored. */
  recordRequest(provider: string, sample: { ok: boolean; latencyMs: number }): void {
    this.states.get(provider)?.requests.record(this.scheduler.now(), sample.ok, sample.latencyMs);
  }

  /**
   * Probes `provider` now and returns its record. Concurrent calls for one
   * provider share one probe.
   *
   * @throws {ProviderNotFound} for a provider that is not watched.
   */
  async check(provider: string): Promise<HealthRecord> {
    return (await this.checkNow(provider)).record;
  }

  /** Like {@link check}, with the probe's own outcome (`ok`, `latencyMs`, `error`). */
  checkNow(provider: string): Promise<HealthCheckResult> {
    const state = this.states.get(provider);
    if (state === undefined) return Promise.reject(new ProviderNotFound(provider));
    state.inFlight ??= this.runProbe(provider, state).finally(() => {
      state.inFlight = undefined;
    });
    return state.inFlight;
  }

  /** Probes every provider at once and returns the aggregate. */
  async checkAll(): Promise<HealthAggregate> {
    await Promise.all(this.providers.map((provider) => this.checkNow(provider)));
    return this.health();
  }

  /**
   * The status record of `provider`.
   *
   * @throws {ProviderNotFound} for a provider that is not watched.
   */
  providerStatus(provider: string): ProviderStatusRecord {
    const state = this.states.get(provider);
    if (state === undefined) throw new ProviderNotFound(provider);
    const now = this.scheduler.now();
    const totals = state.requests.totals(now);
    return {
      provider,
      status: this.isHealthy(provider) ? 'healthy' : 'unhealthy',
      in_cooldown: this.cooldowns?.isCooling(provider) ?? false,
      last_check: iso(state.lastCheck),
      uptime_percent: state.uptime.percent(now),
      requests_last_minute: totals.requests,
      errors_last_minute: totals.errors,
      average_latency_ms: totals.averageLatencyMs === null ? null : Math.round(totals.averageLatencyMs * 100) / 100,
    };
  }

  /** Every provider's record and the overall verdict. */
  health(): HealthAggregate {
    const providers: Record<string, HealthRecord> = {};
    let healthy = 0;
    for (const provider of this.states.keys()) {
      Object.defineProperty(providers, provider, { enumerable: true, value: this.record(provider) });
      if (this.isHealthy(provider)) healthy++;
    }
    const overall = healthy === this.states.size && healthy > 0 ? 'healthy' : healthy === 0 ? 'unhealthy' : 'degraded';
    return { providers, overall, timestamp: new Date(this.scheduler.now()).toISOString() };
  }

  /** Replaces the watched providers (a config reload). Providers that stay keep their state; new ones start healthy. */
  setProviders(providers: string[]): void {
    const names = nameList(providers, 'providers');
    const now = this.scheduler.now();
    const kept = new Map(this.states);
    this.states.clear();
    for (const name of names) {
      this.states.set(
        name,
        kept.get(name) ?? {
          status: 'healthy',
          failuresInRow: 0,
          passesInRow: 0,
          lastCheck: Number.NaN,
          lastSuccess: Number.NaN,
          lastError: null,
          requests: new RequestWindow(),
          uptime: new UptimeTracker(now, true),
          inFlight: undefined,
        },
      );
    }
  }

  /**
   * Hot reload; the given settings merge into the current ones. Turning
   * checking off returns every unhealthy provider to healthy (nothing would
   * ever probe it back); a new interval applies from now, without waiting
   * out the old one.
   */
  configure(settings: HealthSettings): void {
    const wasEnabled = this.settings.enabled;
    this.settings = resolveSettings(settings, this.settings);
    if (!this.settings.enabled) {
      for (const [provider, state] of this.states) {
        state.failuresInRow = 0;
        state.passesInRow = 0;
        this.setStatus(provider, state, 'healthy');
      }
    }
    // Switched on: probe at once, as start() does. Otherwise the next round comes one new interval from now.
    if (this.running) this.restartLoop(wasEnabled ? this.settings.intervalMs : 0);
  }

  /** Starts probing: a first round at once, then one every `intervalMs` after the last settles. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.restartLoop(0);
  }

  /** Stops probing. Probes already running finish and are recorded. */
  stop(): void {
    this.running = false;
    this.loop++;
    if (this.timer !== undefined) this.scheduler.clearTimeout(this.timer);
    this.timer = undefined;
  }

  // ---- internals ------------------------------------------------------------

  private restartLoop(firstDelayMs: number): void {
    const loop = ++this.loop;
    if (this.timer !== undefined) this.scheduler.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.settings.enabled) return;
    const round = async () => {
      this.timer = undefined;
      try {
        await this.checkAll();
      } finally {
        // Even if a listener threw: the loop must outlive one bad round.
        if (this.loop === loop && this.running) this.timer = this.scheduler.setTimeout(round, this.settings.intervalMs);
      }
    };
    this.timer = this.scheduler.setTimeout(round, firstDelayMs);
  }

  private async runProbe(provider: string, state: ProviderHealth): Promise<HealthCheckResult> {
    const started = this.scheduler.now();
    let error: string | undefined;
    try {
      await withTimeout(this.scheduler, this.settings.timeoutMs, `health check of ${provider}`, (signal) => this.probe(provider, signal));
    } catch (failure) {
      error = errorMessage(failure);
    }
    const at = this.scheduler.now();
    const latencyMs = at - started;
    const ok = error === undefined;
    this.events.emit('health:check', ok ? { provider, ok, latencyMs, at } : { provider, ok, latencyMs, error: error!, at });
    // A provider removed (or replaced) while its probe ran: the outcome is not its state's any more.
    if (this.states.get(provider) === state) this.apply(provider, state, error, at);
    const result = { provider, ok, latencyMs, at, record: this.recordOf(provider, state) };
    return ok ? result : { ...result, error: error! };
  }

  private apply(provider: string, state: ProviderHealth, error: string | undefined, at: number): void {
    state.lastCheck = at;
    if (error === undefined) {
      state.lastSuccess = at;
      state.lastError = null;
      state.failuresInRow = 0;
      state.passesInRow++;
      if (state.status === 'unhealthy' && state.passesInRow >= this.settings.healthyThreshold) this.setStatus(provider, state, 'healthy');
    } else {
      state.lastError = error;
      state.passesInRow = 0;
      state.failuresInRow++;
      if (state.status === 'healthy' && state.failuresInRow >= this.settings.unhealthyThreshold)
        this.setStatus(provider, state, 'unhealthy');
    }
  }

  private setStatus(provider: string, state: ProviderHealth, status: HealthStatus): void {
    const previous = state.status;
    if (previous === status) return;
    const at = this.scheduler.now();
    state.status = status;
    state.uptime.set(at, status === 'healthy');
    this.events.emit('health:change', { provider, status, previous, at });
  }

  private record(provider: string): HealthRecord {
    return this.recordOf(provider, this.states.get(provider)!);
  }

  private recordOf(provider: string, state: ProviderHealth): HealthRecord {
    return {
      provider,
      status: state.status === 'healthy' || !this.settings.enabled ? 'healthy' : 'unhealthy',
      last_check: iso(state.lastCheck),
      last_success: iso(state.lastSuccess),
      error_count: state.failuresInRow,
      last_error: state.lastError,
    };
  }
}

function resolveSettings(settings: HealthSettings | undefined, current: Required<HealthSettings>): Required<HealthSettings> {
  if (settings !== undefined && (typeof settings !== 'object' || settings === null)) {
    throw new RoutingError('invalid_config', 'health settings must be an object');
  }
  const merged = { ...current, ...definedOnly(settings ?? {}) };
  boolean(merged.enabled, 'health_check.enabled');
  positiveMs(merged.intervalMs, 'health_check.intervalMs');
  positiveMs(merged.timeoutMs, 'health_check.timeoutMs');
  integerIn(merged.unhealthyThreshold, 'health_check.unhealthyThreshold', 1, 1000);
  integerIn(merged.healthyThreshold, 'health_check.healthyThreshold', 1, 1000);
  return merged;
}

function iso(ms: number): string | null {
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}
