/**
 * @module signalStore
 * The numbers alert conditions read, kept from events: per-provider and
 * service-wide counts over a sliding window (requests, errors, rate limits,
 * failed health checks, workflow failures), latency and time-to-first-byte
 * histograms for quantiles, and current state (health, cooldowns, in-flight
 * requests, quota).
 *
 * The window is a ring of 120 buckets spanning the longest window any rule
 * asks for, so memory is fixed and a window is exact to one bucket width
 * (horizon ÷ 120: 5 s for the default 10 minutes).
 */
import { type Clock, systemClock } from '@switchyard/runtime';
import type {
  AttemptEndEvent,
  CooldownEndEvent,
  CooldownStartEvent,
  EventObserver,
  HealthChangeEvent,
  HealthCheckEvent,
  QuotaUpdateEvent,
  RequestEndEvent,
  RequestStartEvent,
  WorkflowAgentJobEvent,
  WorkflowGateFailedEvent,
  WorkflowSubcommandEvent,
} from '../events.js';
import { LabelLimiter, OTHER_LABEL } from '../metrics/labelLimiter.js';
import type { SignalReader } from './expression.js';
import { binOf, LOG_HISTOGRAM_BINS, quantileOf } from './logHistogram.js';
import type { SignalRef } from './signals.js';

/** Options of {@link SignalStore}. */
export interface SignalStoreOptions {
  clock?: Clock;
  /** The longest window any condition reads (default 10 minutes). */
  horizonMs?: number;
  /** Providers to evaluate per-provider rules for even before they see traffic. */
  knownProviders?: Iterable<string>;
  /** Providers tracked at most; the rest share `other` (default 200). */
  maxProviders?: number;
}

const BUCKETS = 120;

class Bucket {
  start = -1;
  requests = 0;
  errors = 0;
  rateLimits = 0;
  latencySumMs = 0;
  healthFailures = 0;
  gateFailures = 0;
  failedJobs = 0;
  failedSubcommands = 0;
  latency: Float64Array | null = null;
  ttfb: Float64Array | null = null;

  reset(start: number): void {
    this.start = start;
    this.requests = this.errors = this.rateLimits = this.latencySumMs = 0;
    this.healthFailures = this.gateFailures = this.failedJobs = this.failedSubcommands = 0;
    this.latency?.fill(0);
    this.ttfb?.fill(0);
  }
}

type Counted =
  | 'requests'
  | 'errors'
  | 'rateLimits'
  | 'latencySumMs'
  | 'healthFailures'
  | 'gateFailures'
  | 'failedJobs'
  | 'failedSubcommands';

class Ring {
  private readonly buckets = Array.from({ length: BUCKETS }, () => new Bucket());

  constructor(private readonly width: number) {}

  at(now: number): Bucket {
    const start = Math.floor(now / this.width) * this.width;
    const bucket = this.buckets[Math.floor(now / this.width) % BUCKETS]!;
    if (bucket.start !== start) bucket.reset(start);
    return bucket;
  }

  /** Buckets overlapping (now − window, now]. */
  *within(now: number, windowMs: number): Generator<Bucket> {
    const from = now - windowMs;
    for (const bucket of this.buckets) {
      if (bucket.start < 0 || bucket.start > now) continue;
      if (bucket.start + this.width > from) yield bucket;
    }
  }

  sum(now: number, windowMs: number, field: Counted): number {
    let total = 0;
    for (const bucket of this.within(now, windowMs)) total += bucket[field];
    return total;
  }

  merged(now: number, windowMs: number, field: 'latency' | 'ttfb'): Float64Array {
    const out = new Float64Array(LOG_HISTOGRAM_BINS);
    for (const bucket of this.within(now, windowMs)) {
      const counts = bucket[field];
      if (!counts) continue;
      for (let i = 0; i < LOG_HISTOGRAM_BINS; i++) out[i]! += counts[i]!;
    }
    return out;
  }
}

/**
 * Keeps alert inputs from events, as an {@link EventObserver}, and reads
 * them for conditions.
 *
 * @example
 * ```ts
 * const signals = new SignalStore({ clock: scheduler });
 * signals.onRequestEnd(event);
 * signals.read({ name: 'error_rate', kind: 'ratio', scope: 'both', windowMs: 60_000 }, null); // 0.02
 * ```
 */
export class SignalStore implements EventObserver {
  private readonly clock: Clock;
  private readonly width: number;
  readonly horizonMs: number;
  private readonly providerNames: LabelLimiter;
  private readonly global: Ring;
  private readonly perProvider = new Map<string, Ring>();
  private readonly health = new Map<string, 'healthy' | 'unhealthy'>();
  private readonly cooldowns = new Map<string, number>();
  private readonly quota = new Map<string, Map<string, number>>();
  private readonly known = new Set<string>();
  private inFlight = 0;

  constructor(options: SignalStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.horizonMs = Math.max(1000, options.horizonMs ?? 600_000);
    this.width = Math.max(1000, Math.ceil(this.horizonMs / (BUCKETS - 2)));
    this.global = new Ring(this.width);
    this.providerNames = new LabelLimiter(options.maxProviders ?? 200, options.knownProviders);
    for (const provider of options.knownProviders ?? []) this.known.add(provider);
  }

  /** Providers seen or declared, for per-provider rules. */
  providers(): string[] {
    return [...this.known];
  }

  /** A {@link SignalReader} over this store. */
  readonly reader: SignalReader = (signal, provider) => this.read(signal, provider);

  /** The current value of a signal for a provider (or the service when `null`); `undefined` when there is no data. */
  read(signal: SignalRef, provider: string | null): number | string | undefined {
    const now = this.clock.now();
    const window = Math.min(signal.windowMs ?? this.horizonMs, this.horizonMs);
    const ring = provider === null ? this.global : this.perProvider.get(provider);
    switch (signal.name) {
      case 'provider_health':
        return provider === null ? undefined : this.health.get(provider);
      case 'in_flight':
        return this.inFlight;
      case 'active_cooldowns':
        return this.activeCooldowns(now, provider);
      case 'quota_remaining': {
        const credentials = provider === null ? undefined : this.quota.get(provider);
        if (!credentials || credentials.size === 0) return undefined;
        return Math.min(...credentials.values());
      }
    }
    if (!ring) return signal.kind === 'count' ? 0 : undefined;
    switch (signal.name) {
      case 'error_rate': {
        const requests = ring.sum(now, window, 'requests');
        return requests === 0 ? undefined : ring.sum(now, window, 'errors') / requests;
      }
      case 'request_count':
        return ring.sum(now, window, 'requests');
      case 'error_count':
        return ring.sum(now, window, 'errors');
      case 'request_rate':
        return ring.sum(now, window, 'requests') / (window / 1000);
      case 'rate_limit_count':
        return ring.sum(now, window, 'rateLimits');
      case 'health_check_failures':
        return ring.sum(now, window, 'healthFailures');
      case 'gate_failures':
        return ring.sum(now, window, 'gateFailures');
      case 'failed_agent_jobs':
        return ring.sum(now, window, 'failedJobs');
      case 'failed_subcommands':
        return ring.sum(now, window, 'failedSubcommands');
      case 'avg_latency': {
        const requests = ring.sum(now, window, 'requests');
        return requests === 0 ? undefined : ring.sum(now, window, 'latencySumMs') / requests / 1000;
      }
    }
    if (signal.quantile !== undefined) {
      const field = signal.name.endsWith('_ttfb') ? 'ttfb' : 'latency';
      const ms = quantileOf(ring.merged(now, window, field), signal.quantile);
      return ms === undefined ? undefined : ms / 1000;
    }
    return undefined;
  }

  onRequestStart(_event: RequestStartEvent): void {
    this.inFlight++;
  }

  onRequestEnd(event: RequestEndEvent): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    const now = this.clock.now();
    this.recordRequest(this.global.at(now), event);
    if (event.provider !== null) this.recordRequest(this.ring(event.provider).at(now), event);
  }

  onAttemptEnd(event: AttemptEndEvent): void {
    if (event.httpStatus !== 429 && event.errorType !== 'rate_limit') return;
    const now = this.clock.now();
    this.global.at(now).rateLimits++;
    this.ring(event.provider).at(now).rateLimits++;
  }

  onHealthChange(event: HealthChangeEvent): void {
    this.health.set(this.provider(event.provider), event.status);
  }

  onHealthCheck(event: HealthCheckEvent): void {
    if (event.ok) return;
    const now = this.clock.now();
    this.global.at(now).healthFailures++;
    this.ring(event.provider).at(now).healthFailures++;
  }

  onCooldownStart(event: CooldownStartEvent): void {
    this.cooldowns.set(event.key, Math.max(this.cooldowns.get(event.key) ?? 0, event.endsAt));
  }

  onCooldownEnd(event: CooldownEndEvent): void {
    this.cooldowns.delete(event.key);
  }

  onQuotaUpdate(event: QuotaUpdateEvent): void {
    const provider = this.provider(event.provider);
    let credentials = this.quota.get(provider);
    if (!credentials) this.quota.set(provider, (credentials = new Map()));
    if (event.remaining === null) credentials.delete(event.credentialId);
    else credentials.set(event.credentialId, event.remaining);
  }

  onWorkflowGateFailed(_event: WorkflowGateFailedEvent): void {
    this.global.at(this.clock.now()).gateFailures++;
  }

  onWorkflowAgentJob(event: WorkflowAgentJobEvent): void {
    if (event.state === 'Failed') this.global.at(this.clock.now()).failedJobs++;
  }

  onWorkflowSubcommand(event: WorkflowSubcommandEvent): void {
    if (event.exitCode !== 0) this.global.at(this.clock.now()).failedSubcommands++;
  }

  private recordRequest(bucket: Bucket, event: RequestEndEvent): void {
    bucket.requests++;
    if (event.outcome === 'error') bucket.errors++;
    bucket.latencySumMs += event.latencyMs;
    (bucket.latency ??= new Float64Array(LOG_HISTOGRAM_BINS))[binOf(event.latencyMs)]!++;
    if (event.ttfbMs !== null) (bucket.ttfb ??= new Float64Array(LOG_HISTOGRAM_BINS))[binOf(event.ttfbMs)]!++;
  }

  private provider(name: string): string {
    const folded = this.providerNames.fold(name);
    this.known.add(folded);
    return folded;
  }

  private ring(name: string): Ring {
    const provider = this.provider(name);
    let ring = this.perProvider.get(provider);
    if (!ring) this.perProvider.set(provider, (ring = new Ring(this.width)));
    return ring;
  }

  private activeCooldowns(now: number, provider: string | null): number {
    let count = 0;
    for (const [key, endsAt] of this.cooldowns) {
      if (endsAt <= now) continue;
      if (provider === null || key === provider || key.startsWith(`${provider}/`) || key.startsWith(`${provider}:`)) count++;
      else if (provider === OTHER_LABEL && !this.known.has(key.split(/[/:]/, 1)[0]!)) count++;
    }
    return count;
  }
}
