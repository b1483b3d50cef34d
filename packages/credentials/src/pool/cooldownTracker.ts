/**
 * @module cooldownTracker
 * Per-credential cooldown with exponential backoff. A 429 cools the one
 * credential that got it, for the server's `Retry-After` when it sent one,
 * else for a backoff that doubles with each consecutive failure; other
 * errors cool it only after several in a row.
 *
 * The pool depends on the {@link CredentialCooldowns} interface, whose
 * methods and events follow core-routing's `CooldownManager`, so either can
 * serve; this small tracker keeps the package independent of it meanwhile.
 */
import { type Scheduler, systemScheduler, type TimerHandle } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';

/** A failure that may start a cooldown. */
export interface CooldownFailure {
  kind: 'rate_limit' | 'error';
  /** The upstream's `Retry-After`, in milliseconds. */
  retryAfterMs?: number;
}

/** Events of {@link CredentialCooldowns}. */
export interface CooldownEvents {
  'cooldown:start': [{ key: string; until: number; reason: string; failures: number }];
  'cooldown:end': [{ key: string }];
}

/** What the pool needs from a cooldown tracker (the shape of core-routing's `CooldownManager`). */
export interface CredentialCooldowns {
  readonly events: EventEmitter<CooldownEvents>;
  recordFailure(key: string, failure: CooldownFailure): void;
  recordSuccess(key: string): void;
  isCooling(key: string): boolean;
  /** Starts (or extends) a cooldown by hand. */
  cooldown(key: string, ms: number, reason: string): void;
  /** When the key's cooldown ends (epoch ms); undefined when it is not cooling. */
  coolingUntil(key: string): number | undefined;
  /** Forgets a key, ending any cooldown without an event (the credential is gone). */
  forget(key: string): void;
}

/** Options of {@link CooldownTracker}. */
export interface CooldownTrackerOptions {
  scheduler?: Scheduler;
  /** First backoff of a rate limit without `Retry-After` (default 5 s). */
  baseMs?: number;
  /** Longest backoff (default 5 minutes). */
  maxMs?: number;
  /** Longest `Retry-After` honoured (default 1 hour). */
  maxRetryAfterMs?: number;
  /** Consecutive `error` failures that start a cooldown (default 3). */
  errorThreshold?: number;
  /** Spreads backoffs by ±10% so that nodes do not retry in step; returns [0, 1). Default Math.random. */
  random?: () => number;
}

interface KeyState {
  failures: number;
  errors: number;
  until: number;
  timer: TimerHandle | undefined;
}

/**
 * Cooldowns per key, on an injected scheduler.
 *
 * @example
 * ```ts
 * const cooldowns = new CooldownTracker({ scheduler });
 * cooldowns.events.on('cooldown:end', ({ key }) => console.log(`${key} is back`));
 * cooldowns.recordFailure('openai-1', { kind: 'rate_limit', retryAfterMs: 20_000 });
 * ```
 */
export class CooldownTracker implements CredentialCooldowns {
  readonly events = new EventEmitter<CooldownEvents>();
  private readonly scheduler: Scheduler;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly errorThreshold: number;
  private readonly random: () => number;
  private readonly states = new Map<string, KeyState>();

  constructor(options: CooldownTrackerOptions = {}) {
    this.scheduler = options.scheduler ?? systemScheduler;
    this.baseMs = options.baseMs ?? 5_000;
    this.maxMs = options.maxMs ?? 5 * 60_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60 * 60_000;
    this.errorThreshold = options.errorThreshold ?? 3;
    this.random = options.random ?? Math.random;
  }

  recordFailure(key: string, failure: CooldownFailure): void {
    const state = this.state(key);
    if (failure.kind === 'error') {
      state.errors++;
      if (state.errors < this.errorThreshold) return;
      state.errors = 0;
    }
    state.failures++;
    const retryAfter = failure.retryAfterMs;
    const ms =
      retryAfter !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0
        ? Math.min(retryAfter, this.maxRetryAfterMs)
        : this.backoff(state.failures);
    this.start(key, state, ms, failure.kind === 'rate_limit' ? 'rate_limited' : 'errors');
  }

  recordSuccess(key: string): void {
    const state = this.states.get(key);
    if (!state) return;
    state.failures = 0;
    state.errors = 0;
  }

  isCooling(key: string): boolean {
    const state = this.states.get(key);
    return state !== undefined && state.until > this.scheduler.now();
  }

  coolingUntil(key: string): number | undefined {
    const state = this.states.get(key);
    return state && state.until > this.scheduler.now() ? state.until : undefined;
  }

  cooldown(key: string, ms: number, reason: string): void {
    this.start(key, this.state(key), Math.max(0, ms), reason);
  }

  forget(key: string): void {
    const state = this.states.get(key);
    if (state?.timer !== undefined) this.scheduler.clearTimeout(state.timer);
    this.states.delete(key);
  }

  private backoff(failures: number): number {
    const raw = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(failures - 1, 30));
    return Math.round(raw * (0.9 + 0.2 * this.random()));
  }

  private start(key: string, state: KeyState, ms: number, reason: string): void {
    const until = this.scheduler.now() + ms;
    // A shorter cooldown never cuts a longer one short.
    if (until <= state.until) return;
    state.until = until;
    if (state.timer !== undefined) this.scheduler.clearTimeout(state.timer);
    state.timer = this.scheduler.setTimeout(() => {
      state.timer = undefined;
      state.until = 0;
      this.events.emit('cooldown:end', { key });
    }, ms);
    this.events.emit('cooldown:start', { key, until, reason, failures: state.failures });
  }

  private state(key: string): KeyState {
    let state = this.states.get(key);
    if (!state) {
      state = { failures: 0, errors: 0, until: 0, timer: undefined };
      this.states.set(key, state);
    }
    return state;
  }
}
