/**
 * @module selfHealer
 * Tries to bring unhealthy providers back (`server.operations.self_healing`).
 * An episode starts when the health monitor marks a provider unhealthy (or,
 * every `checkIntervalMs`, for any unhealthy provider not yet being healed).
 * Each attempt runs the pluggable healing actions (reset a connection pool,
 * refresh credentials, ...) and then probes the provider; a failed attempt
 * is retried after `backoffMs`, up to `maxAttempts`, after which the healer
 * gives up until the provider has been healthy again. Every attempt, action
 * and outcome is an event.
 */

import { type Scheduler, systemScheduler, type TimerHandle, withTimeout } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import { errorMessage, ProviderNotFound, RoutingError } from '../errors.js';
import { boolean, definedOnly, integerIn, positiveMs } from '../validate.js';
import type { HealthMonitor } from './healthMonitor.js';

/** `server.operations.self_healing`. */
export interface SelfHealingSettings {
  /** Default true. */
  enabled?: boolean;
  /** How often unhealthy providers not being healed are picked up. Default 60,000. */
  checkIntervalMs?: number;
  /** Attempts per episode. Default 3. */
  maxAttempts?: number;
  /** Between two attempts. Default 30,000. */
  backoffMs?: number;
  /** A healing action still running after this fails (its signal is aborted). Default 30,000. */
  actionTimeoutMs?: number;
}

/** One way to heal a provider. Actions run in the order given; a failing one does not stop the others. */
export interface HealingAction {
  name: string;
  run(provider: string, signal: AbortSignal): Promise<void>;
  /** Whether the action applies to `provider`. Default: every provider. */
  appliesTo?(provider: string): boolean;
}

/** How an episode (or one attempt of it) ended. */
export type HealingOutcome = 'recovered' | 'retrying' | 'gave_up' | 'cancelled';

/** The typed events of a {@link SelfHealer}. */
export interface SelfHealingEvents {
  'healing:attempt': (event: { provider: string; attempt: number; maxAttempts: number; at: number }) => void;
  'healing:action': (event: { provider: string; attempt: number; action: string; ok: boolean; error?: string; at: number }) => void;
  /** `retrying` carries `nextAttemptAt`; `gave_up` and `retrying` carry the probe's `error`. */
  'healing:outcome': (event: {
    provider: string;
    attempt: number;
    outcome: HealingOutcome;
    nextAttemptAt?: number;
    error?: string;
    at: number;
  }) => void;
}

/** One provider in {@link SelfHealer.status}. */
export interface HealingStatus {
  state: 'healing' | 'healed' | 'gave_up';
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
}

/** The last healing action run on a provider, kept after its episode ends. */
export interface HealingActionRecord {
  action: string;
  ok: boolean;
  error: string | null;
  attempt: number;
  at: string;
}

interface Episode {
  state: HealingStatus['state'];
  attempts: number;
  timer: TimerHandle | undefined;
  nextAttemptAt: number;
  lastError: string | null;
  running: boolean;
}

const DEFAULTS: Required<SelfHealingSettings> = {
  enabled: true,
  checkIntervalMs: 60_000,
  maxAttempts: 3,
  backoffMs: 30_000,
  actionTimeoutMs: 30_000,
};

/**
 * Heals unhealthy providers of a {@link HealthMonitor}.
 *
 * @example
 * ```ts
 * const healer = new SelfHealer({
 *   health,
 *   actions: [{ name: 'reset_pool', run: async (provider) => pools.get(provider)?.destroy() }],
 * });
 * healer.events.on('healing:outcome', (e) => log.info(e, 'self-healing'));
 * healer.start();
 * ```
 */
export class SelfHealer {
  readonly events = new EventEmitter<SelfHealingEvents>();
  /** The last action per provider, for the operations API (bounded by the providers healed). */
  private readonly lastActions = new Map<string, HealingActionRecord>();
  private readonly scheduler: Scheduler;
  private readonly health: HealthMonitor;
  private actions: HealingAction[];
  private settings: Required<SelfHealingSettings>;
  private readonly episodes = new Map<string, Episode>();
  private running = false;
  private tickTimer: TimerHandle | undefined;
  private readonly onChange = (event: { provider: string; status: string }) => this.healthChanged(event.provider, event.status);
  private readonly onCheck = (event: { provider: string; ok: boolean }) => {
    // A failed probe after a healed episode means the healing did not hold: the provider may be healed again.
    if (!event.ok && this.episodes.get(event.provider)?.state === 'healed') this.episodes.delete(event.provider);
  };

  constructor(options: { health: HealthMonitor; actions?: HealingAction[]; settings?: SelfHealingSettings; scheduler?: Scheduler }) {
    this.scheduler = options.scheduler ?? systemScheduler;
    this.health = options.health;
    this.actions = checkActions(options.actions ?? []);
    this.settings = resolveSettings(options.settings, DEFAULTS);
  }

  /** Listens to the monitor and picks up unhealthy providers every `checkIntervalMs`. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.health.events.on('health:change', this.onChange);
    this.health.events.on('health:check', this.onCheck);
    this.scheduleTick(0);
  }

  /** Stops listening and cancels every episode. */
  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.health.events.off('health:change', this.onChange);
    this.health.events.off('health:check', this.onCheck);
    if (this.tickTimer !== undefined) this.scheduler.clearTimeout(this.tickTimer);
    this.tickTimer = undefined;
    for (const provider of [...this.episodes.keys()]) this.cancel(provider);
  }

  /** Hot reload; settings merge into the current ones. Switching off cancels running episodes. */
  configure(settings: SelfHealingSettings, actions?: HealingAction[]): void {
    const next = resolveSettings(settings, this.settings);
    if (actions !== undefined) this.actions = checkActions(actions);
    const intervalChanged = next.checkIntervalMs !== this.settings.checkIntervalMs;
    this.settings = next;
    if (!next.enabled) for (const provider of [...this.episodes.keys()]) this.cancel(provider);
    if (this.running && intervalChanged) this.scheduleTick(next.checkIntervalMs);
  }

  /**
   * Starts a fresh episode for `provider` now, whatever its state (an
   * operator's "heal it"). Resolves when the first attempt is done.
   *
   * @throws {ProviderNotFound} for a provider the monitor does not watch.
   */
  async heal(provider: string): Promise<void> {
    if (!this.health.providers.includes(provider)) throw new ProviderNotFound(provider);
    this.cancel(provider);
    const episode = this.begin(provider);
    await this.attempt(provider, episode);
  }

  /** The last healing action run on `provider`, whether or not it is being healed now. */
  lastAction(provider: string): HealingActionRecord | undefined {
    return this.lastActions.get(provider);
  }

  /** Providers being healed, healed, or given up on. */
  status(): Record<string, HealingStatus> {
    const out: Record<string, HealingStatus> = {};
    for (const [provider, episode] of this.episodes) {
      Object.defineProperty(out, provider, {
        enumerable: true,
        value: {
          state: episode.state,
          attempts: episode.attempts,
          next_attempt_at: episode.timer === undefined ? null : new Date(episode.nextAttemptAt).toISOString(),
          last_error: episode.lastError,
        },
      });
    }
    return out;
  }

  // ---- internals ------------------------------------------------------------

  private healthChanged(provider: string, status: string): void {
    if (status === 'unhealthy') {
      if (this.settings.enabled && !this.episodes.has(provider)) this.schedule(provider, this.begin(provider), 0);
      return;
    }
    const episode = this.episodes.get(provider);
    if (episode === undefined) return;
    this.episodes.delete(provider);
    this.unschedule(episode);
    if (episode.state === 'healing') this.outcome(provider, episode, 'recovered');
  }

  private tick(): void {
    this.tickTimer = undefined;
    if (this.settings.enabled) {
      for (const provider of this.health.providers) {
        if (!this.health.isHealthy(provider) && !this.episodes.has(provider)) this.schedule(provider, this.begin(provider), 0);
      }
    }
    this.scheduleTick(this.settings.checkIntervalMs);
  }

  private scheduleTick(delayMs: number): void {
    if (this.tickTimer !== undefined) this.scheduler.clearTimeout(this.tickTimer);
    this.tickTimer = this.scheduler.setTimeout(() => this.tick(), delayMs);
  }

  private begin(provider: string): Episode {
    const episode: Episode = {
      state: 'healing',
      attempts: 0,
      timer: undefined,
      nextAttemptAt: Number.NaN,
      lastError: null,
      running: false,
    };
    this.episodes.set(provider, episode);
    return episode;
  }

  private schedule(provider: string, episode: Episode, delayMs: number): void {
    this.unschedule(episode);
    episode.nextAttemptAt = this.scheduler.now() + delayMs;
    episode.timer = this.scheduler.setTimeout(() => {
      episode.timer = undefined;
      void this.attempt(provider, episode);
    }, delayMs);
  }

  private unschedule(episode: Episode): void {
    if (episode.timer !== undefined) this.scheduler.clearTimeout(episode.timer);
    episode.timer = undefined;
  }

  private async attempt(provider: string, episode: Episode): Promise<void> {
    if (this.episodes.get(provider) !== episode || episode.running) return;
    episode.running = true;
    try {
      await this.runAttempt(provider, episode);
    } finally {
      episode.running = false;
    }
  }

  private recordAction(provider: string, attempt: number, action: string, error: string | null): void {
    const at = new Date(this.scheduler.now()).toISOString();
    this.lastActions.set(provider, { action, ok: error === null, error, attempt, at });
  }

  private async runAttempt(provider: string, episode: Episode): Promise<void> {
    const attempt = ++episode.attempts;
    const { maxAttempts } = this.settings;
    this.events.emit('healing:attempt', { provider, attempt, maxAttempts, at: this.scheduler.now() });
    for (const action of this.actions) {
      if (this.episodes.get(provider) !== episode) break;
      if (action.appliesTo && !action.appliesTo(provider)) continue;
      try {
        await withTimeout(this.scheduler, this.settings.actionTimeoutMs, `healing action ${action.name}`, (signal) =>
          action.run(provider, signal),
        );
        this.recordAction(provider, attempt, action.name, null);
        this.events.emit('healing:action', { provider, attempt, action: action.name, ok: true, at: this.scheduler.now() });
      } catch (error) {
        this.recordAction(provider, attempt, action.name, errorMessage(error));
        this.events.emit('healing:action', {
          provider,
          attempt,
          action: action.name,
          ok: false,
          error: errorMessage(error),
          at: this.scheduler.now(),
        });
      }
    }
    let error: string | undefined;
    try {
      const result = await this.health.checkNow(provider);
      error = result.ok ? undefined : (result.error ?? 'the health check failed');
    } catch (failure) {
      error = errorMessage(failure);
    }
    // Cancelled, recovered by the monitor or restarted while this attempt ran: that already has its outcome.
    if (this.episodes.get(provider) !== episode) return;
    episode.lastError = error ?? null;
    if (error === undefined) {
      episode.state = 'healed';
      this.outcome(provider, episode, 'recovered');
    } else if (attempt >= maxAttempts) {
      episode.state = 'gave_up';
      this.outcome(provider, episode, 'gave_up', { error });
    } else {
      this.schedule(provider, episode, this.settings.backoffMs);
      this.outcome(provider, episode, 'retrying', { error, nextAttemptAt: episode.nextAttemptAt });
    }
  }

  private cancel(provider: string): void {
    const episode = this.episodes.get(provider);
    if (episode === undefined) return;
    this.episodes.delete(provider);
    this.unschedule(episode);
    if (episode.state === 'healing') this.outcome(provider, episode, 'cancelled');
  }

  private outcome(
    provider: string,
    episode: Episode,
    outcome: HealingOutcome,
    extra: { error?: string; nextAttemptAt?: number } = {},
  ): void {
    this.events.emit('healing:outcome', { provider, attempt: episode.attempts, outcome, ...extra, at: this.scheduler.now() });
  }
}

function resolveSettings(settings: SelfHealingSettings | undefined, current: Required<SelfHealingSettings>): Required<SelfHealingSettings> {
  const merged = { ...current, ...definedOnly(settings ?? {}) };
  boolean(merged.enabled, 'self_healing.enabled');
  positiveMs(merged.checkIntervalMs, 'self_healing.checkIntervalMs');
  integerIn(merged.maxAttempts, 'self_healing.maxAttempts', 1, 1000);
  positiveMs(merged.backoffMs, 'self_healing.backoffMs');
  positiveMs(merged.actionTimeoutMs, 'self_healing.actionTimeoutMs');
  return merged;
}

function checkActions(actions: HealingAction[]): HealingAction[] {
  if (!Array.isArray(actions)) throw new RoutingError('invalid_argument', 'actions must be an array');
  actions.forEach((action, index) => {
    if (typeof action?.name !== 'string' || action.name.length === 0)
      throw new RoutingError('invalid_argument', `actions[${index}].name must be a non-empty string`);
    if (typeof action.run !== 'function') throw new RoutingError('invalid_argument', `actions[${index}].run must be a function`);
  });
  return [...actions];
}
