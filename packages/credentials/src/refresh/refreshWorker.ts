/**
 * @module refreshWorker
 * Keeps OAuth tokens fresh. Every `auth.refresh.check_interval` (5 minutes)
 * it refreshes the OAuth credentials that expire within
 * `refresh_lead_time` (10 minutes), or have expired. Separately, a safety
 * pass runs every 15 minutes whatever the config says, so a disabled or
 * stalled worker never leaves tokens to lapse.
 *
 * - **Single-flight.** Refresh tokens are often single-use: there is never
 *   more than one refresh of a credential at a time. The worker, the safety
 *   pass, a relay that got a 401 and an operator all share the one refresh
 *   in flight.
 * - **No downtime.** The old token keeps serving until the new one is stored
 *   (the manager swaps it in the pool only then).
 * - **Backoff.** A failed refresh is retried after 30 s, doubling up to 30
 *   minutes. A rejected grant is not retried at all: the manager marks the
 *   credential `error`, and a person signs in again.
 */
import type { Scheduler, TimerHandle } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import type { Credential } from '../credential.js';
import { CredentialsError } from '../errors.js';

/** The refresh worker's status record (`GET /auths/refresh/status`). */
export interface RefreshStatusRecord {
  enabled: boolean;
  check_interval_ms: number;
  refresh_lead_time_ms: number;
  /** When the last pass ran (ISO 8601). */
  last_check: string | null;
  /** When the next pass runs. */
  next_check: string | null;
  /** Credentials the last pass looked at, refreshed, and failed to refresh. */
  credentials_checked: number;
  refreshed: number;
  failed: number;
  totals: { checks: number; refreshed: number; failed: number };
  in_flight: string[];
  backoff: { id: string; failures: number; next_attempt: string; last_error: string }[];
  safety_pass: { interval_ms: number; last_run: string | null; next_run: string | null };
}

/** Events of {@link RefreshWorker}. */
export interface RefreshEvents {
  'refresh:success': [{ credentialId: string }];
  'refresh:failure': [{ credentialId: string; code: string; message: string; nextAttempt: string | null }];
  'refresh:check': [{ reason: 'interval' | 'safety' | 'manual'; checked: number; refreshed: number; failed: number }];
}

/** Options of {@link RefreshWorker}. */
export interface RefreshWorkerOptions {
  scheduler: Scheduler;
  /** `auth.refresh.enabled` (default true). The safety pass runs either way. */
  enabled?: boolean;
  /** `auth.refresh.check_interval` (default 5 minutes). */
  checkIntervalMs?: number;
  /** `auth.refresh.refresh_lead_time` (default 10 minutes). */
  leadTimeMs?: number;
  /** The safety pass (default 15 minutes; 0 turns it off). */
  safetyIntervalMs?: number;
  /** First retry delay after a failure (default 30 s), doubling up to `maxBackoffMs` (default 30 minutes). */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Refreshes at once during a pass (default 4). */
  concurrency?: number;
  /** The OAuth credentials to consider. */
  candidates: () => Iterable<Credential>;
  /** Performs one refresh: the flow's call, then the store write and the swap. */
  perform: (credentialId: string) => Promise<void>;
}

interface Backoff {
  failures: number;
  nextAttemptAt: number;
  lastError: string;
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/**
 * Refreshes OAuth credentials ahead of their expiry.
 *
 * @example
 * ```ts
 * const worker = new RefreshWorker({ scheduler, candidates: () => oauthCredentials(), perform: (id) => refreshOne(id) });
 * worker.start();
 * await worker.refresh('code-assistant-me');   // joins a refresh already in flight
 * ```
 */
export class RefreshWorker {
  readonly events = new EventEmitter<RefreshEvents>();
  private readonly scheduler: Scheduler;
  private readonly options: Required<Omit<RefreshWorkerOptions, 'scheduler' | 'candidates' | 'perform'>>;
  private readonly candidates: () => Iterable<Credential>;
  private readonly perform: (credentialId: string) => Promise<void>;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly backoffs = new Map<string, Backoff>();
  private timers: { main?: TimerHandle; safety?: TimerHandle } = {};
  private next: { main?: number; safety?: number } = {};
  private last: { main?: number; safety?: number; counts: { checked: number; refreshed: number; failed: number } } = {
    counts: { checked: 0, refreshed: 0, failed: 0 },
  };
  private totals = { checks: 0, refreshed: 0, failed: 0 };
  private running = false;

  constructor(options: RefreshWorkerOptions) {
    this.scheduler = options.scheduler;
    this.candidates = options.candidates;
    this.perform = options.perform;
    this.options = {
      enabled: options.enabled ?? true,
      checkIntervalMs: options.checkIntervalMs ?? 5 * 60_000,
      leadTimeMs: options.leadTimeMs ?? 10 * 60_000,
      safetyIntervalMs: options.safetyIntervalMs ?? 15 * 60_000,
      baseBackoffMs: options.baseBackoffMs ?? 30_000,
      maxBackoffMs: options.maxBackoffMs ?? 30 * 60_000,
      concurrency: options.concurrency ?? 4,
    };
    for (const [field, value] of Object.entries(this.options)) {
      if (typeof value === 'number' && !(Number.isFinite(value) && value >= 0)) {
        throw new CredentialsError('invalid_config', `auth.refresh: ${field} must be a duration ≥ 0`, { field: `auth.refresh.${field}` });
      }
    }
  }

  /** Starts the periodic pass (when enabled) and the safety pass. */
  start(): void {
    if (this.running) return;
    this.running = true;
    if (this.options.enabled && this.options.checkIntervalMs > 0) this.arm('main', this.options.checkIntervalMs);
    if (this.options.safetyIntervalMs > 0) this.arm('safety', this.options.safetyIntervalMs);
  }

  /** Stops the passes; refreshes in flight finish. */
  stop(): void {
    this.running = false;
    for (const handle of Object.values(this.timers)) if (handle !== undefined) this.scheduler.clearTimeout(handle);
    this.timers = {};
    this.next = {};
  }

  /** Applies new settings (a config reload) and re-arms the passes. */
  reconfigure(options: Partial<Pick<RefreshWorkerOptions, 'enabled' | 'checkIntervalMs' | 'leadTimeMs' | 'safetyIntervalMs'>>): void {
    const wasRunning = this.running;
    this.stop();
    for (const [key, value] of Object.entries(options)) if (value !== undefined) (this.options as Record<string, unknown>)[key] = value;
    if (wasRunning) this.start();
  }

  /** Whether a credential needs a refresh now: an OAuth token expiring within the lead time, or expired. */
  isDue(credential: Credential, now = this.scheduler.now()): boolean {
    if (credential.type !== 'oauth' || !credential.oauth) return false;
    if (credential.status === 'disabled' || credential.status === 'error') return false;
    if (credential.status === 'expired') return true;
    return credential.expires_at !== undefined && Date.parse(credential.expires_at) - now <= this.options.leadTimeMs;
  }

  /**
   * Refreshes one credential, or joins the refresh of it already in flight.
   * During a backoff it refuses with `refresh_backoff`, unless `force`.
   */
  refresh(credentialId: string, options: { force?: boolean } = {}): Promise<void> {
    const running = this.inFlight.get(credentialId);
    if (running) return running;
    const backoff = this.backoffs.get(credentialId);
    if (backoff && !options.force && backoff.nextAttemptAt > this.scheduler.now()) {
      return Promise.reject(
        new CredentialsError(
          'refresh_backoff',
          `credential ${JSON.stringify(credentialId)} is not refreshed again before ${iso(backoff.nextAttemptAt)} after ${backoff.failures} failure(s): ${backoff.lastError}`,
        ),
      );
    }
    const flight = this.run(credentialId);
    this.inFlight.set(credentialId, flight);
    const clear = () => {
      if (this.inFlight.get(credentialId) === flight) this.inFlight.delete(credentialId);
    };
    flight.then(clear, clear);
    return flight;
  }

  /** Runs one pass now: refreshes every credential that is due and not backing off. */
  async check(reason: 'interval' | 'safety' | 'manual' = 'manual'): Promise<{ checked: number; refreshed: number; failed: number }> {
    const now = this.scheduler.now();
    const due: string[] = [];
    let checked = 0;
    for (const credential of this.candidates()) {
      if (credential.type !== 'oauth') continue;
      checked++;
      const backoff = this.backoffs.get(credential.id);
      if (this.isDue(credential, now) && !(backoff && backoff.nextAttemptAt > now)) due.push(credential.id);
    }
    let refreshed = 0;
    let failed = 0;
    const queue = [...due];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        try {
          await this.refresh(id);
          refreshed++;
        } catch {
          failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, queue.length) }, worker));
    const counts = { checked, refreshed, failed };
    if (reason === 'safety') this.last.safety = now;
    else this.last.main = now;
    this.last.counts = counts;
    this.totals.checks++;
    this.events.emit('refresh:check', { reason, ...counts });
    return counts;
  }

  /** The status record. */
  status(): RefreshStatusRecord {
    const lastCheck = Math.max(this.last.main ?? -1, this.last.safety ?? -1);
    return {
      enabled: this.options.enabled,
      check_interval_ms: this.options.checkIntervalMs,
      refresh_lead_time_ms: this.options.leadTimeMs,
      last_check: lastCheck < 0 ? null : iso(lastCheck),
      next_check: iso(this.next.main ?? this.next.safety),
      credentials_checked: this.last.counts.checked,
      refreshed: this.last.counts.refreshed,
      failed: this.last.counts.failed,
      totals: { ...this.totals },
      in_flight: [...this.inFlight.keys()],
      backoff: [...this.backoffs].map(([id, b]) => ({
        id,
        failures: b.failures,
        next_attempt: iso(b.nextAttemptAt)!,
        last_error: b.lastError,
      })),
      safety_pass: { interval_ms: this.options.safetyIntervalMs, last_run: iso(this.last.safety), next_run: iso(this.next.safety) },
    };
  }

  /** Forgets a credential's backoff (it was deleted, or replaced by hand). */
  forget(credentialId: string): void {
    this.backoffs.delete(credentialId);
  }

  private async run(credentialId: string): Promise<void> {
    try {
      await this.perform(credentialId);
    } catch (error) {
      const code = error instanceof CredentialsError ? error.code : 'refresh_failed';
      const message = error instanceof CredentialsError ? error.message : 'refresh failed';
      this.totals.failed++;
      if (code === 'refresh_rejected' || code === 'credential_not_found' || code === 'not_refreshable') {
        // Retrying cannot help; the manager has marked the credential for a person to act on.
        this.backoffs.delete(credentialId);
        this.events.emit('refresh:failure', { credentialId, code, message, nextAttempt: null });
      } else {
        const previous = this.backoffs.get(credentialId);
        const failures = (previous?.failures ?? 0) + 1;
        const delay = Math.min(this.options.maxBackoffMs, this.options.baseBackoffMs * 2 ** Math.min(failures - 1, 20));
        const nextAttemptAt = this.scheduler.now() + delay;
        this.backoffs.set(credentialId, { failures, nextAttemptAt, lastError: message });
        this.events.emit('refresh:failure', { credentialId, code, message, nextAttempt: iso(nextAttemptAt) });
      }
      throw error;
    }
    this.backoffs.delete(credentialId);
    this.totals.refreshed++;
    this.events.emit('refresh:success', { credentialId });
  }

  private arm(which: 'main' | 'safety', delayMs: number): void {
    if (!this.running) return;
    this.next[which] = this.scheduler.now() + delayMs;
    this.timers[which] = this.scheduler.setTimeout(() => {
      delete this.timers[which];
      delete this.next[which];
      void this.check(which === 'main' ? 'interval' : 'safety')
        .catch(() => undefined)
        .finally(() => this.arm(which, which === 'main' ? this.options.checkIntervalMs : this.options.safetyIntervalMs));
    }, delayMs);
  }
}
