/**
 * @module gatewayMetrics
 * The gateway's svc_* metrics on a prom-client registry, fed by relay,
 * cooldown, health and credential events. Labels that carry outside input
 * (models, providers, credential ids, cooldown keys, error types) go
 * through a {@link LabelLimiter}, so the number of series stays bounded.
 */
import { type Clock, systemClock } from '@switchyard/runtime';
import { Counter, Gauge, Registry } from 'prom-client';
import type {
  AttemptEndEvent,
  CooldownEndEvent,
  CooldownStartEvent,
  CredentialRotatedEvent,
  EventObserver,
  HealingActionEvent,
  HealingOutcomeEvent,
  HealthChangeEvent,
  HealthCheckEvent,
  QuotaUpdateEvent,
  RequestEndEvent,
  RequestStartEvent,
} from '../events.js';
import { CellHistogram } from './cellHistogram.js';
import { type CounterCell, CounterCells, type RequestCells } from './counterCells.js';
import { LabelLimiter } from './labelLimiter.js';
import { type TokenPrice, tokenCost } from './tokenCost.js';

export type { TokenPrice };

/** Buckets of svc_request_duration_seconds: LLM calls run from tens of ms to minutes. */
export const REQUEST_DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];
/** Buckets of svc_time_to_first_byte_seconds. */
export const TTFB_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];

/** Options of {@link GatewayMetrics}. */
export interface GatewayMetricsOptions {
  /** Registry to register on (a fresh one by default; never prom-client's global). */
  registry?: Registry;
  /** Distinct values kept per bounded label before folding into `other` (default 100). */
  maxLabelValues?: number;
  /** Configured models: always kept, never counted against the limit. */
  knownModels?: Iterable<string>;
  /** Configured providers: always kept. */
  knownProviders?: Iterable<string>;
  /** For cooldown remaining seconds at scrape time. */
  clock?: Clock;
  /**
   * The price of a provider's tokens per 1,000 (`providers.<p>.cost_per_1k_tokens`),
   * read at each request so a reload applies; a provider without one costs
   * nothing in `svc_cost_total` (and is left out of it).
   */
  tokenPrice?: (provider: string) => TokenPrice | undefined;
  requestDurationBuckets?: number[];
  ttfbBuckets?: number[];
}

/** Label value of requests that never reached a provider (every candidate cooling, say). */
export const NO_PROVIDER_LABEL = 'none';

type Observer = { observe(value: number): void };

/** The hot-path state of one (provider, model) pair. */
type PairCells = RequestCells;

/** The hot-path state of one provider. */
interface ProviderCells {
  models: Map<string, PairCells>;
  errorTypes: Map<string, CounterCell>;
  attemptsOk: CounterCell;
  attemptsFailed: CounterCell;
  attemptsClientClosed: CounterCell;
  duration: Observer;
  ttfb: Observer;
}

/**
 * The gateway's metrics, as an {@link EventObserver}.
 *
 * @example
 * ```ts
 * const metrics = new GatewayMetrics({ knownProviders: ['openai'] });
 * metrics.onRequestEnd({ requestId: 'r1', model: 'gpt-4o', provider: 'openai', credentialId: null, outcome: 'success',
 *   httpStatus: 200, errorType: null, latencyMs: 820, ttfbMs: 140, tokens: { input: 12, output: 40 }, cached: false, attempts: 1, at: Date.now() });
 * console.log(await metrics.registry.metrics()); // svc_requests_total{provider="openai",model="gpt-4o",status="success"} 1 ...
 * ```
 */
export class GatewayMetrics implements EventObserver {
  readonly registry: Registry;
  private readonly clock: Clock;
  private readonly models: LabelLimiter;
  private readonly providers: LabelLimiter;
  private readonly credentials: LabelLimiter;
  private readonly cooldownKeys: LabelLimiter;
  private readonly errorTypes: LabelLimiter;
  private readonly byProvider = new Map<string, ProviderCells>();
  private readonly requestCells = new CounterCells<'provider' | 'model' | 'status'>();
  private readonly errorCells = new CounterCells<'provider' | 'error_type'>();
  private readonly tokenCells = new CounterCells<'provider' | 'model' | 'type'>();
  private readonly cacheCells = new CounterCells<'provider' | 'model'>();
  private readonly costCells = new CounterCells<'provider' | 'model'>();
  private readonly tokenPrice: ((provider: string) => TokenPrice | undefined) | undefined;
  private readonly attemptCells = new CounterCells<'provider' | 'outcome'>();
  private inFlight = 0;
  /** Active cooldowns by (folded) key → end time, for the remaining-seconds gauge. */
  private readonly cooling = new Map<string, number>();

  // Observed twice per request: series kept per provider, not prom-client's label hashing (cellHistogram.ts).
  private readonly duration: CellHistogram<'provider'>;
  private readonly ttfb: CellHistogram<'provider'>;
  private readonly health: Gauge<'provider'>;
  /** Providers whose svc_provider_health has been set. */
  private readonly healthKnown = new Set<string>();
  private readonly healthChecks: Counter<'provider' | 'outcome'>;
  private readonly cooldownActive: Gauge<'key'>;
  private readonly cooldowns: Counter<'key' | 'reason'>;
  private readonly quotaRemaining: Gauge<'provider' | 'credential'>;
  private readonly quotaUsed: Gauge<'provider' | 'credential'>;
  private readonly quotaLimit: Gauge<'provider' | 'credential'>;
  private readonly rotations: Counter<'provider' | 'reason'>;
  private readonly healingActions: Counter<'provider' | 'action' | 'result'>;
  private readonly healingChecks: Counter<'provider' | 'outcome'>;

  constructor(options: GatewayMetricsOptions = {}) {
    const registry = (this.registry = options.registry ?? new Registry());
    this.clock = options.clock ?? systemClock;
    this.tokenPrice = options.tokenPrice;
    const max = options.maxLabelValues ?? 100;
    this.models = new LabelLimiter(max, options.knownModels);
    this.providers = new LabelLimiter(max, [...(options.knownProviders ?? []), NO_PROVIDER_LABEL]);
    this.credentials = new LabelLimiter(max);
    this.cooldownKeys = new LabelLimiter(max);
    this.errorTypes = new LabelLimiter(Math.min(max, 50));
    const registers = [registry];
    const self = this;

    new Counter({
      name: 'svc_requests_total',
      help: 'Client requests that ended, by provider, model and status (success, error, or client_closed: the client left first).',
      labelNames: ['provider', 'model', 'status'],
      registers,
      collect() {
        self.requestCells.flushInto(this);
      },
    });
    new Counter({
      name: 'svc_errors_total',
      help: 'Failed client requests by provider and error type.',
      labelNames: ['provider', 'error_type'],
      registers,
      collect() {
        self.errorCells.flushInto(this);
      },
    });
    new Counter({
      name: 'svc_tokens_total',
      help: 'Tokens by provider, model and type (input or output).',
      labelNames: ['provider', 'model', 'type'],
      registers,
      collect() {
        self.tokenCells.flushInto(this);
      },
    });
    this.duration = new CellHistogram({
      name: 'svc_request_duration_seconds',
      help: 'Client request latency in seconds, by provider.',
      labelNames: ['provider'],
      buckets: options.requestDurationBuckets ?? REQUEST_DURATION_BUCKETS,
      registers,
    });
    this.ttfb = new CellHistogram({
      name: 'svc_time_to_first_byte_seconds',
      help: 'Time from the client request to the first response byte, in seconds, by provider.',
      labelNames: ['provider'],
      buckets: options.ttfbBuckets ?? TTFB_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'svc_requests_in_flight',
      help: 'Client requests started and not yet ended.',
      registers,
      collect() {
        this.set(self.inFlight);
      },
    });
    new Counter({
      name: 'svc_cache_hits_total',
      help: 'Client requests answered from the response cache, by provider and model.',
      labelNames: ['provider', 'model'],
      registers,
      collect() {
        self.cacheCells.flushInto(this);
      },
    });
    this.healingActions = new Counter({
      name: 'svc_self_healing_actions_total',
      help: 'Self-healing actions run on unhealthy providers, by provider, action and result (ok or failed).',
      labelNames: ['provider', 'action', 'result'],
      registers,
    });
    this.healingChecks = new Counter({
      name: 'svc_self_healing_checks_total',
      help: 'Health checks after a self-healing attempt, by provider and outcome (recovered, retrying, gave_up, cancelled).',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    // A metric of its own: the specification's svc_* metrics keep their labels.
    new Counter({
      name: 'svc_cost_total',
      help: "Cost of the tokens used, by provider and model: tokens / 1000 x providers.<p>.cost_per_1k_tokens (input and output), in the prices' currency. Providers without a price are left out.",
      labelNames: ['provider', 'model'],
      registers,
      collect() {
        self.costCells.flushInto(this);
      },
    });
    new Counter({
      name: 'svc_upstream_attempts_total',
      help: 'Upstream calls (first tries and retries) by provider and outcome (success, error, or client_closed: cut off because the client left).',
      labelNames: ['provider', 'outcome'],
      registers,
      collect() {
        self.attemptCells.flushInto(this);
      },
    });
    this.health = new Gauge({
      name: 'svc_provider_health',
      help: 'Provider health as the health monitor judges it: 1 healthy, 0 unhealthy.',
      labelNames: ['provider'],
      registers,
    });
    this.healthChecks = new Counter({
      name: 'svc_health_checks_total',
      help: 'Active health checks by provider and outcome (ok or failed).',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    this.cooldownActive = new Gauge({
      name: 'svc_cooldown_active',
      help: 'Whether a cooldown key (provider or credential) is cooling down: 1 yes, 0 no.',
      labelNames: ['key'],
      registers,
    });
    new Gauge({
      name: 'svc_cooldown_remaining_seconds',
      help: 'Seconds until a cooling key returns (absent when not cooling).',
      labelNames: ['key'],
      registers,
      collect() {
        this.reset();
        const now = self.clock.now();
        for (const [key, endsAt] of self.cooling) this.set({ key }, Math.max(0, (endsAt - now) / 1000));
      },
    });
    this.cooldowns = new Counter({
      name: 'svc_cooldowns_total',
      help: 'Cooldowns started, by key and reason.',
      labelNames: ['key', 'reason'],
      registers,
    });
    this.quotaRemaining = new Gauge({
      name: 'svc_credential_quota_remaining',
      help: 'Quota left on a credential (absent when unlimited).',
      labelNames: ['provider', 'credential'],
      registers,
    });
    this.quotaUsed = new Gauge({
      name: 'svc_credential_quota_used',
      help: 'Quota used by a credential in its current period.',
      labelNames: ['provider', 'credential'],
      registers,
    });
    this.quotaLimit = new Gauge({
      name: 'svc_credential_quota_limit',
      help: 'Quota limit of a credential (absent when unlimited).',
      labelNames: ['provider', 'credential'],
      registers,
    });
    this.rotations = new Counter({
      name: 'svc_credential_rotations_total',
      help: 'Credential rotations by provider and reason.',
      labelNames: ['provider', 'reason'],
      registers,
    });
  }

  /** Values folded into `other` so far, per label kind (a hint that a limit is too low). */
  foldedLabels(): Record<'model' | 'provider' | 'credential' | 'cooldown_key' | 'error_type', number> {
    return {
      model: this.models.folded,
      provider: this.providers.folded,
      credential: this.credentials.folded,
      cooldown_key: this.cooldownKeys.folded,
      error_type: this.errorTypes.folded,
    };
  }

  onRequestStart(_event: RequestStartEvent): void {
    this.inFlight++;
  }

  onRequestEnd(event: RequestEndEvent): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    const provider = this.provider(event.provider ?? NO_PROVIDER_LABEL);
    const pair = this.pair(provider, event.model);
    if (event.outcome === 'success') pair.success.value++;
    // A client that left is no error of the upstream's or the gateway's: it stays out of svc_errors_total.
    else if (event.outcome === 'client_closed') pair.clientClosed.value++;
    else {
      pair.error.value++;
      this.errorCell(provider, event.errorType ?? 'unknown').value++;
    }
    if (event.tokens.input > 0) pair.tokensIn.value += event.tokens.input;
    if (event.tokens.output > 0) pair.tokensOut.value += event.tokens.output;
    if (event.cached) pair.cacheHits.value++;
    if (this.tokenPrice && event.provider !== null && (event.tokens.input > 0 || event.tokens.output > 0)) {
      const price = this.tokenPrice(event.provider);
      if (price) pair.cost.value += tokenCost(event.tokens, price);
    }
    provider.duration.observe(event.latencyMs / 1000);
    if (event.ttfbMs !== null) provider.ttfb.observe(event.ttfbMs / 1000);
  }

  onHealingAction(event: HealingActionEvent): void {
    this.healingActions.inc({
      provider: this.labelOf(this.provider(event.provider)),
      action: event.action,
      result: event.ok ? 'ok' : 'failed',
    });
  }

  onHealingOutcome(event: HealingOutcomeEvent): void {
    this.healingChecks.inc({ provider: this.labelOf(this.provider(event.provider)), outcome: event.outcome });
  }

  onAttemptEnd(event: AttemptEndEvent): void {
    const provider = this.provider(event.provider);
    if (event.outcome === 'success') provider.attemptsOk.value++;
    else if (event.outcome === 'client_closed') provider.attemptsClientClosed.value++;
    else provider.attemptsFailed.value++;
  }

  onCooldownStart(event: CooldownStartEvent): void {
    const key = this.cooldownKeys.fold(event.key);
    this.cooldownActive.set({ key }, 1);
    this.cooldowns.inc({ key, reason: event.reason });
    this.cooling.set(key, Math.max(this.cooling.get(key) ?? 0, event.endsAt));
  }

  onCooldownEnd(event: CooldownEndEvent): void {
    const key = this.cooldownKeys.fold(event.key);
    this.cooldownActive.set({ key }, 0);
    this.cooling.delete(key);
  }

  onHealthChange(event: HealthChangeEvent): void {
    const provider = this.providers.fold(event.provider);
    this.healthKnown.add(provider);
    this.health.set({ provider }, event.status === 'healthy' ? 1 : 0);
  }

  onHealthCheck(event: HealthCheckEvent): void {
    const provider = this.providers.fold(event.provider);
    this.healthChecks.inc({ provider, outcome: event.ok ? 'ok' : 'failed' });
    // The monitor starts every provider healthy without a change event: a provider that stays
    // healthy would otherwise have no svc_provider_health series at all.
    if (!this.healthKnown.has(provider)) {
      this.healthKnown.add(provider);
      this.health.set({ provider }, 1);
    }
  }

  onCredentialRotated(event: CredentialRotatedEvent): void {
    this.rotations.inc({ provider: this.providers.fold(event.provider), reason: event.reason });
  }

  onQuotaUpdate(event: QuotaUpdateEvent): void {
    const labels = { provider: this.providers.fold(event.provider), credential: this.credentials.fold(event.credentialId) };
    this.quotaUsed.set(labels, event.used);
    if (event.remaining === null) this.quotaRemaining.remove(labels);
    else this.quotaRemaining.set(labels, event.remaining);
    if (event.limit === null) this.quotaLimit.remove(labels);
    else this.quotaLimit.set(labels, event.limit);
  }

  /**
   * The cells of a provider, keyed by its raw name: a known name costs one
   * Map lookup, and folding happens only when a name is first seen.
   */
  private provider(raw: string): ProviderCells {
    let cells = this.byProvider.get(raw);
    if (cells) return cells;
    const provider = this.providers.fold(raw);
    cells = this.byProvider.get(provider);
    if (!cells) {
      cells = {
        models: new Map(),
        errorTypes: new Map(),
        attemptsOk: this.attemptCells.create({ provider, outcome: 'success' }),
        attemptsFailed: this.attemptCells.create({ provider, outcome: 'error' }),
        attemptsClientClosed: this.attemptCells.create({ provider, outcome: 'client_closed' }),
        duration: this.duration.labels({ provider }),
        ttfb: this.ttfb.labels({ provider }),
      };
      this.byProvider.set(provider, cells);
      this.labels.set(cells, provider);
    }
    // Cache the raw name too (bounded: past the limit, names are not cached, only folded).
    if (this.byProvider.size < this.providers.max * 4) this.byProvider.set(raw, cells);
    return cells;
  }

  private pair(provider: ProviderCells, rawModel: string): PairCells {
    let cells = provider.models.get(rawModel);
    if (cells) return cells;
    const model = this.models.fold(rawModel);
    cells = provider.models.get(model);
    if (!cells) {
      const name = this.labelOf(provider);
      cells = {
        success: this.requestCells.create({ provider: name, model, status: 'success' }),
        error: this.requestCells.create({ provider: name, model, status: 'error' }),
        clientClosed: this.requestCells.create({ provider: name, model, status: 'client_closed' }),
        tokensIn: this.tokenCells.create({ provider: name, model, type: 'input' }),
        tokensOut: this.tokenCells.create({ provider: name, model, type: 'output' }),
        cacheHits: this.cacheCells.create({ provider: name, model }),
        cost: this.costCells.create({ provider: name, model }),
      };
      provider.models.set(model, cells);
    }
    if (provider.models.size < this.models.max * 4) provider.models.set(rawModel, cells);
    return cells;
  }

  private errorCell(provider: ProviderCells, rawType: string): CounterCell {
    let cell = provider.errorTypes.get(rawType);
    if (cell) return cell;
    const type = this.errorTypes.fold(rawType);
    cell = provider.errorTypes.get(type) ?? this.errorCells.create({ provider: this.labelOf(provider), error_type: type });
    provider.errorTypes.set(type, cell);
    if (provider.errorTypes.size < this.errorTypes.max * 4) provider.errorTypes.set(rawType, cell);
    return cell;
  }

  private readonly labels = new WeakMap<ProviderCells, string>();

  private labelOf(provider: ProviderCells): string {
    return this.labels.get(provider)!;
  }
}
