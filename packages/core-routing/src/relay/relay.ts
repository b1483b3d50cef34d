/**
 * @module relay
 * Carries one client request to an upstream provider and back:
 *
 * 1. candidates are the providers serving the model, minus those cooling
 *    down or unhealthy (the routing table's selectors hold them out);
 * 2. the provider strategy picks one, the provider's credential pool picks a
 *    credential;
 * 3. the attempt runs (streams pass through event by event);
 * 4. on a 429, a connection error, a timeout or a 5xx the failure is
 *    recorded (per credential and per provider) and another candidate is
 *    tried; on a 401 an OAuth credential is refreshed once, or rotated;
 * 5. retries happen only before the first byte reaches the client, within
 *    the attempt budget;
 * 6. afterwards usage is reported (the pool deducts quota), and latency,
 *    cost and outcome go out as events.
 *
 * A credential out of quota is handled as `quotaPolicy` says (rotate or
 * return the 429; one retry with a preview model).
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import { type Clock, type Scheduler, systemClock, systemScheduler } from '../clock.js';
import type { CooldownEvents } from '../cooldown/cooldownTypes.js';
import { NoProviderAvailable, TranslationError } from '../errors.js';
import type { HealthEvents } from '../health/healthTypes.js';
import type { StrategyName } from '../selection/selector.js';
import { type AttemptResult, runAttempt } from './attempt.js';
import type { RelayFailure } from './errors.js';
import type { RelayEvents, RequestEndEvent } from './events.js';
import { clientFailure, prepareExchange } from './exchange.js';
import { NodeFailover } from './failover.js';
import { ingressFormat } from './ingressFormat.js';
import { failureToClient, selectionFailure } from './outcome.js';
import { AdapterRegistry, type ProviderAdapter, type Transport } from './providers/adapter.js';
import { anthropicAdapter } from './providers/anthropic.js';
import { cloudCodingAssistantAdapter } from './providers/cloudCodingAssistant.js';
import { codeAssistantAdapter } from './providers/codeAssistant.js';
import { geminiAdapter } from './providers/gemini.js';
import { createMockAdapter } from './providers/mock.js';
import { openAiAdapter, openAiCompatibleAdapter } from './providers/openai.js';
import { openAiResponsesAdapter } from './providers/responses.js';
import {
  type CredentialQuotaView,
  localQuotaFailure,
  previewModelFor,
  type QuotaExceededSettings,
  type QuotaHit,
  QuotaMemory,
} from './quotaPolicy.js';
import type { ResponseCache } from './responseCache.js';
import { type Route, RoutingTable } from './routingTable.js';
import type { ResponseSink } from './sink.js';
import type { ProviderConfig, RelayCredential, RelayRequest, UpstreamFailure, Usage } from './types.js';
import { UndiciTransport } from './upstream.js';

/** A provider's credentials, as the relay uses them (implemented by `@switchyard/credentials`). */
export interface RelayCredentialPool {
  acquire(options?: { exclude?: ReadonlySet<string> }): RelayCredential;
  reportSuccess(credentialId: string, usage?: { inputTokens: number; outputTokens: number }): void;
  reportFailure(
    credentialId: string,
    failure: { kind: 'rate_limit' | 'unauthorized' | 'quota_exceeded' | 'error'; retryAfterMs?: number; message?: string },
  ): void;
  refresh(credentialId: string): Promise<RelayCredential>;
  /** One credential's state; lets `quota-exceeded.switch-project: false` see that the credential in use ran out. */
  statusOf?(credentialId: string): CredentialQuotaView | undefined;
  /** Every credential's state; tells a pool out of quota from one out of credentials. */
  status?(): readonly CredentialQuotaView[];
  /** A credential as `acquire` hands it out, whatever its state (for the preview-model retry on a credential the upstream refused). */
  peekById?(credentialId: string): RelayCredential | undefined;
}

/**
 * Per-provider cooldown bookkeeping (implemented by `CooldownManager`). With
 * `events`, the relay holds cooling providers out of selection as cooldowns
 * start and end, on this node or (through a shared store) another.
 */
export interface RelayCooldowns {
  recordFailure(key: string, failure: { kind: 'rate_limit' | 'error'; retryAfterMs?: number; status?: number }): unknown;
  recordSuccess(key: string): void;
  period?(key: string): { endsAt: number } | undefined;
  events?: EventEmitter<CooldownEvents>;
}

/** Per-provider request statistics (implemented by `HealthMonitor`); with `events`, unhealthy providers are held out. */
export interface RelayHealth {
  recordRequest(provider: string, sample: { ok: boolean; latencyMs: number }): void;
  isHealthy?(provider: string): boolean;
  /** The providers it watches; others are never held out as unhealthy. */
  readonly providers?: readonly string[];
  events?: EventEmitter<HealthEvents>;
}

/** Options of {@link Relay}. */
export interface RelayOptions {
  providers: ProviderConfig[];
  strategy?: StrategyName;
  /** Provider kinds; default {@link defaultAdapters}. */
  adapters?: AdapterRegistry;
  /** HTTP transport; default an {@link UndiciTransport} with default pool settings. */
  transport?: Transport;
  credentials?: { pool(provider: string): RelayCredentialPool | undefined };
  cooldowns?: RelayCooldowns;
  health?: RelayHealth;
  cache?: ResponseCache;
  /** Node failover (`server.failover`). */
  failover?: NodeFailover;
  /** Attempts per request, the first included (default 3). */
  maxAttempts?: number;
  clock?: Clock;
  /** Timers for stream keep-alives; default real timers (tests pass a `FakeScheduler`). */
  scheduler?: Scheduler;
  /**
   * Keep-alive interval of a started stream, in milliseconds (default 15 s;
   * 0 turns them off). A keep-alive is an SSE comment, or Anthropic's `ping`
   * event for Anthropic clients, sent only after a silence this long, so
   * proxies with idle timeouts do not cut long reasoning pauses.
   */
  keepAliveMs?: number;
  latencyWindowMs?: number;
  /** `quota-exceeded.*` (both default true). */
  quotaExceeded?: QuotaExceededSettings;
}

const DEFAULT_KEEP_ALIVE_MS = 15_000;

/**
 * The default adapters: `openai`, `openai-compatible`, `openai-responses`,
 * `anthropic`, `gemini`, `code-assistant`, `cloud-coding-assistant`, and the
 * demo `mock`.
 */
export function defaultAdapters(): AdapterRegistry {
  return new AdapterRegistry([
    openAiAdapter,
    openAiCompatibleAdapter,
    openAiResponsesAdapter,
    anthropicAdapter,
    geminiAdapter,
    codeAssistantAdapter,
    cloudCodingAssistantAdapter,
    createMockAdapter(),
  ]);
}

interface RequestState {
  exhausted: Set<string>;
  serverFailed: Set<string>;
  noCredentials: Set<string>;
  triedCredentials: Map<string, Set<string>>;
  refreshed: Set<string>;
  attempts: number;
  lastFailure: UpstreamFailure | undefined;
  /** The last quota that stopped a credential or a provider in this request. */
  quota: QuotaHit | undefined;
  /** Quota ends the request here (switch-project is off). */
  quotaStop: boolean;
  previewTried: boolean;
}

/** An attempt decided before the loop gets to it: a refreshed credential, or the preview-model retry. */
interface PinnedAttempt {
  provider: string;
  credential: RelayCredential | undefined;
  upstreamModel?: string | undefined;
  /** The preview-model retry (it may go past the attempt budget, and is the last attempt). */
  preview?: boolean;
}

/**
 * The relay engine.
 *
 * @example
 * ```ts
 * const relay = new Relay({ providers: [{ name: 'demo', kind: 'mock', models: ['demo-model'] }] });
 * const sink = new MemorySink();
 * await relay.handle({ requestId: '1', ingress: 'openai-chat', model: 'demo-model', stream: false, body, rawBody }, sink);
 * ```
 */
export class Relay {
  readonly events = new EventEmitter<RelayEvents>();
  readonly table: RoutingTable;
  private options: RelayOptions;
  private readonly adapters: AdapterRegistry;
  private readonly transport: Transport;
  private readonly clock: Clock;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly scheduler: Scheduler;
  private readonly quotaMemory = new QuotaMemory();

  constructor(options: RelayOptions) {
    this.options = options;
    this.clock = options.clock ?? options.scheduler ?? systemClock;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.adapters = options.adapters ?? defaultAdapters();
    this.transport = options.transport ?? new UndiciTransport();
    this.table = new RoutingTable(options.providers, {
      strategy: options.strategy ?? 'round_robin',
      clock: this.clock,
      ...(options.latencyWindowMs !== undefined ? { latencyWindowMs: options.latencyWindowMs } : {}),
    });
    this.followAvailability();
  }

  /** Holds providers out of selection while they cool down or are unhealthy, and lets them back after. */
  private followAvailability(): void {
    const { cooldowns, health } = this.options;
    const table = this.table;
    if (cooldowns?.events) {
      const onStart: CooldownEvents['cooldown:start'] = (period) => table.markUnavailable(period.key, 'cooldown', period.endsAt);
      const onUpdate: CooldownEvents['cooldown:update'] = (event) =>
        table.markUnavailable(event.period.key, 'cooldown', event.period.endsAt);
      const onEnd: CooldownEvents['cooldown:end'] = (event) => table.markAvailable(event.key, 'cooldown');
      cooldowns.events.on('cooldown:start', onStart);
      cooldowns.events.on('cooldown:update', onUpdate);
      cooldowns.events.on('cooldown:end', onEnd);
      this.unsubscribe.push(() => {
        cooldowns.events?.off('cooldown:start', onStart);
        cooldowns.events?.off('cooldown:update', onUpdate);
        cooldowns.events?.off('cooldown:end', onEnd);
      });
    }
    if (health?.events) {
      const onChange: HealthEvents['health:change'] = (event) => {
        if (event.status === 'unhealthy') table.markUnavailable(event.provider, 'unhealthy');
        else table.markAvailable(event.provider, 'unhealthy');
      };
      health.events.on('health:change', onChange);
      this.unsubscribe.push(() => health.events?.off('health:change', onChange));
    }
    this.resyncAvailability();
  }

  /** Re-applies the current cooldown and health state to every provider (after a reload). */
  resyncAvailability(): void {
    const { cooldowns, health } = this.options;
    const watched = new Set(health?.providers ?? []);
    for (const provider of this.options.providers) {
      const period = cooldowns?.period?.(provider.name);
      if (period) this.table.markUnavailable(provider.name, 'cooldown', period.endsAt);
      else this.table.markAvailable(provider.name, 'cooldown');
      if (health?.isHealthy && watched.has(provider.name) && !health.isHealthy(provider.name))
        this.table.markUnavailable(provider.name, 'unhealthy');
      else this.table.markAvailable(provider.name, 'unhealthy');
    }
  }

  /** Stops following cooldown and health events. */
  close(): void {
    for (const off of this.unsubscribe.splice(0)) off();
  }

  /** Applies new providers, strategy or attempt budget without dropping requests in flight. */
  configure(options: Partial<Pick<RelayOptions, 'providers' | 'strategy' | 'maxAttempts' | 'keepAliveMs' | 'quotaExceeded'>>): void {
    this.options = { ...this.options, ...options };
    this.table.configure(this.options.providers, this.options.strategy ?? 'round_robin');
    this.resyncAvailability();
  }

  /** The models the providers serve, for `GET /v1/models`. */
  models() {
    return this.table.models();
  }

  /** The adapter of a provider kind. */
  adapter(kind: string): ProviderAdapter | undefined {
    return this.adapters.get(kind);
  }

  /** The provider kinds this relay can talk to. */
  adapterKinds(): string[] {
    return this.adapters.kinds();
  }

  /** Handles one request, writing the answer (or an error in the client's format) to `sink`. */
  async handle(request: RelayRequest, sink: ResponseSink): Promise<RequestEndEvent> {
    const startedAt = this.clock.now();
    // Events with no listener are not built: this runs for every request.
    if (this.events.listenerCount('request:start') > 0)
      this.events.emit('request:start', {
        requestId: request.requestId,
        model: request.model,
        ingress: request.ingress,
        stream: request.stream,
        at: startedAt,
      });
    const end = (fields: Omit<RequestEndEvent, 'requestId' | 'model' | 'latencyMs' | 'at'>): RequestEndEvent => {
      const at = this.clock.now();
      const event = { requestId: request.requestId, model: request.model, latencyMs: at - startedAt, at, ...fields };
      this.events.emit('request:end', event);
      return event;
    };

    const cache = this.options.cache;
    const cacheKey = !request.stream && cache?.enabled && !request.noCache ? cache.key(request.ingress, request.body) : undefined;
    if (cacheKey) {
      const hit = cache!.get(cacheKey);
      if (hit) {
        sink.writeHead(hit.status, { ...hit.headers, 'x-request-id': request.requestId, 'x-switchyard-cache': 'hit' });
        sink.end(hit.body);
        return end({
          provider: hit.provider,
          credentialId: null,
          outcome: 'success',
          httpStatus: hit.status,
          errorType: null,
          ttfbMs: 0,
          tokens: { input: 0, output: 0 },
          cached: true,
          attempts: 0,
        });
      }
    }

    const failover = this.options.failover;
    const owner = failover?.ownerElsewhere(NodeFailover.affinityKey(request), request.forwarded === true);
    if (owner) {
      const forwarded = await failover!.forward(owner, request, sink);
      if (forwarded.kind === 'answered') return end(this.forwardedEnd(owner, forwarded.status));
      // The owner is unreachable (and now off the ring): serve it here.
    }

    const route = this.table.route(request.model);
    if (!route) {
      const failure: RelayFailure = {
        status: 404,
        code: 'model_not_found',
        type: 'invalid_request_error',
        param: 'model',
        message: `no provider serves the model ${JSON.stringify(request.model)}`,
      };
      this.fail(request, sink, failure);
      return end({
        provider: null,
        credentialId: null,
        outcome: 'error',
        httpStatus: 404,
        errorType: failure.code,
        ttfbMs: null,
        tokens: { input: 0, output: 0 },
        cached: false,
        attempts: 0,
      });
    }

    const state: RequestState = {
      exhausted: new Set(),
      serverFailed: new Set(),
      noCredentials: new Set(),
      triedCredentials: new Map(),
      refreshed: new Set(),
      attempts: 0,
      lastFailure: undefined,
      quota: undefined,
      quotaStop: false,
      previewTried: false,
    };
    const maxAttempts = Math.max(1, this.options.maxAttempts ?? 3);
    let pinned: PinnedAttempt | undefined;
    let lastProvider: string | null = null;
    let lastCredential: string | null = null;

    while (!request.signal?.aborted) {
      if (state.attempts >= maxAttempts || state.quotaStop) {
        // The preview-model retry is the one attempt allowed past the budget.
        if (!pinned?.preview) pinned = this.previewRetry(request, route, state, sink);
        if (!pinned) break;
      }
      let provider: string;
      let credential: RelayCredential | undefined;
      let upstreamModel: string | undefined;
      let preview = false;
      if (pinned) {
        ({ provider, credential, upstreamModel } = pinned);
        preview = pinned.preview === true;
        pinned = undefined;
      } else {
        const picked = this.pick(route, state, request);
        if ('failure' in picked) {
          pinned = this.previewRetry(request, route, state, sink);
          if (pinned) continue;
          const backup = failover?.backupFor(request.forwarded === true);
          if (backup) {
            // active_passive: nothing here can serve it; the backup gateway may.
            const forwarded = await failover!.forward(backup, request, sink);
            if (forwarded.kind === 'answered') return end(this.forwardedEnd(backup, forwarded.status));
          }
          this.fail(request, sink, picked.failure);
          return end({
            provider: lastProvider,
            credentialId: lastCredential,
            outcome: 'error',
            httpStatus: picked.failure.status,
            errorType: picked.failure.code,
            ttfbMs: null,
            tokens: { input: 0, output: 0 },
            cached: false,
            attempts: state.attempts,
          });
        }
        if (picked.retry) continue;
        ({ provider, credential } = picked);
      }
      state.attempts++;
      lastProvider = provider;
      lastCredential = credential?.id ?? null;
      if (credential) this.quotaMemory.served(provider, credential.id);
      const result = await this.attempt(request, sink, route, provider, credential, startedAt, state.attempts, upstreamModel);
      if (result.kind === 'success') {
        this.recordSuccess(provider, credential, result.usage, this.clock.now() - startedAt);
        if (cacheKey && result.body)
          cache!.set(cacheKey, { status: result.status, headers: result.headers, body: result.body, provider, usage: result.usage });
        return end({
          provider,
          credentialId: credential?.id ?? null,
          outcome: 'success',
          httpStatus: result.status,
          errorType: null,
          ttfbMs: result.ttfbMs,
          tokens: usageOf(result.usage),
          cached: false,
          attempts: state.attempts,
        });
      }
      const failure = result.failure;
      state.lastFailure = failure;
      if (result.kind === 'broken') {
        if (result.usage && credential) this.options.credentials?.pool(provider)?.reportSuccess(credential.id, tokensOf(result.usage));
        this.recordProviderFailure(provider, failure);
        return end({
          provider,
          credentialId: credential?.id ?? null,
          outcome: 'error',
          httpStatus: 200,
          errorType: failure.kind,
          ttfbMs: result.ttfbMs,
          tokens: usageOf(result.usage),
          cached: false,
          attempts: state.attempts,
        });
      }
      if (failure.kind === 'client') {
        this.passThroughClientError(request, sink, failure);
        return end({
          provider,
          credentialId: credential?.id ?? null,
          outcome: 'error',
          httpStatus: failure.status ?? 400,
          errorType: 'client',
          ttfbMs: null,
          tokens: { input: 0, output: 0 },
          cached: false,
          attempts: state.attempts,
        });
      }
      const retrySame = await this.handleFailure(provider, credential, failure, state);
      if (retrySame) pinned = { provider, credential: retrySame, ...(preview ? { upstreamModel, preview } : {}) };
      else if (preview) break;
    }
    const backup = request.signal?.aborted ? undefined : failover?.backupFor(request.forwarded === true);
    if (backup && !sink.headersSent) {
      // active_passive: every attempt here failed before its first byte (the primary's upstream is down
      // before health checks and cooldowns have noticed); the backup gateway may still serve it.
      const forwarded = await failover!.forward(backup, request, sink);
      if (forwarded.kind === 'answered') return end(this.forwardedEnd(backup, forwarded.status));
    }
    const failure = failureToClient(state.lastFailure, request.signal?.aborted === true);
    this.fail(request, sink, failure);
    return end({
      provider: lastProvider,
      credentialId: lastCredential,
      outcome: 'error',
      httpStatus: failure.status,
      errorType: state.lastFailure?.kind ?? failure.code,
      ttfbMs: null,
      tokens: { input: 0, output: 0 },
      cached: false,
      attempts: state.attempts,
    });
  }

  private forwardedEnd(node: string, status: number): Omit<RequestEndEvent, 'requestId' | 'model' | 'latencyMs' | 'at'> {
    return {
      provider: `node:${node}`,
      credentialId: null,
      outcome: status < 400 ? 'success' : 'error',
      httpStatus: status,
      errorType: status < 400 ? null : 'forwarded',
      ttfbMs: null,
      tokens: { input: 0, output: 0 },
      cached: false,
      attempts: 0,
    };
  }

  /** Chooses a provider and a credential for the next attempt. */
  private pick(
    route: Route,
    state: RequestState,
    request: RelayRequest,
  ): { provider: string; credential: RelayCredential | undefined; retry?: false } | { retry: true } | { failure: RelayFailure } {
    let provider: string;
    try {
      provider = route.selector.select(state.exhausted.size > 0 ? { exclude: state.exhausted } : undefined);
    } catch (error) {
      if (error instanceof NoProviderAvailable && state.serverFailed.size > 0) {
        // Every candidate failed once: give the ones that failed with a server error a second try.
        for (const name of state.serverFailed) state.exhausted.delete(name);
        state.serverFailed.clear();
        return { retry: true };
      }
      return { failure: selectionFailure(error, state, this.clock.now()) };
    }
    if (this.events.listenerCount('decision') > 0)
      this.events.emit('decision', {
        requestId: request.requestId,
        model: request.model,
        provider,
        strategy: route.selector.strategy,
        candidates: route.targets.map((t) => t.provider),
        at: this.clock.now(),
      });
    const config = this.table.provider(provider)!;
    const adapter = this.adapters.get(config.kind);
    const pool = this.options.credentials?.pool(provider);
    if (pool && this.stuckOnExhausted(provider, pool, state)) return { retry: true };
    if (!adapter) {
      state.exhausted.add(provider);
      state.lastFailure = { kind: 'server', status: null, message: `provider ${provider} has unknown kind ${JSON.stringify(config.kind)}` };
      return { retry: true };
    }
    if (!pool) {
      if (!adapter.requiresCredential) return { provider, credential: undefined };
      state.exhausted.add(provider);
      state.noCredentials.add(provider);
      return { retry: true };
    }
    try {
      const tried = state.triedCredentials.get(provider);
      return { provider, credential: pool.acquire(tried ? { exclude: tried } : undefined) };
    } catch {
      state.exhausted.add(provider);
      state.noCredentials.add(provider);
      this.noteLocalExhaustion(provider, pool, state);
      this.noteProviderWideLimit(provider, pool);
      return { retry: true };
    }
  }

  private get quotaSettings(): Required<QuotaExceededSettings> {
    const q = this.options.quotaExceeded;
    return { switchCredential: q?.switchCredential ?? true, switchPreviewModel: q?.switchPreviewModel ?? true };
  }

  /**
   * switch-project off: a provider stays on the credential it served last;
   * once that one is out of quota, the request ends with a 429 instead of
   * moving to another credential.
   */
  private stuckOnExhausted(provider: string, pool: RelayCredentialPool, state: RequestState): boolean {
    if (this.quotaSettings.switchCredential || !pool.statusOf) return false;
    const current = this.quotaMemory.current(provider);
    const view = current === undefined ? undefined : pool.statusOf(current);
    if (!view || !this.quotaMemory.isOut(provider, view)) return false;
    state.quota = { provider };
    state.lastFailure = localQuotaFailure(
      provider,
      `credential ${current} has no quota left, and quota-exceeded.switch-project is off`,
      [view.quota?.resets_at],
      this.clock.now(),
    );
    state.quotaStop = true;
    return true;
  }

  /** When a pool handed out nothing because its credentials are out of quota, the client hears about quota (429), not a missing credential. */
  private noteLocalExhaustion(provider: string, pool: RelayCredentialPool, state: RequestState): void {
    const out = this.quotaMemory.allOut(provider, pool.status?.());
    if (!out) return;
    state.quota ??= { provider };
    state.lastFailure ??= localQuotaFailure(
      provider,
      `every credential is out of quota (${out.map((r) => r.id).join(', ')})`,
      out.map((r) => r.quota?.resets_at),
      this.clock.now(),
    );
  }

  /**
   * The one retry with a preview model, when quota is what ends the request
   * and nothing has reached the client: the same provider, on a credential
   * the upstream refused for quota (quotas are often per model upstream);
   * never on one the pool's own token count says is used up.
   */
  private previewRetry(request: RelayRequest, route: Route, state: RequestState, sink: ResponseSink): PinnedAttempt | undefined {
    const hit = state.quota;
    if (!hit || state.previewTried || !this.quotaSettings.switchPreviewModel || sink.headersSent || sink.closed) return undefined;
    if (state.lastFailure && state.lastFailure.kind !== 'quota_exceeded') return undefined;
    const config = this.table.provider(hit.provider);
    const model = previewModelFor(config?.previewModels, [request.model, route.upstreamModel.get(hit.provider) ?? request.model]);
    if (!config || !model) return undefined;
    let credential = hit.credential;
    const pool = this.options.credentials?.pool(hit.provider);
    if (!credential && pool) {
      const id = this.quotaMemory.previewCandidate(hit.provider, pool.status?.());
      credential = id === undefined ? undefined : pool.peekById?.(id);
      if (!credential) return undefined;
    }
    state.previewTried = true;
    return { provider: hit.provider, credential, upstreamModel: config.aliases?.[model] ?? model, preview: true };
  }

  /** When no credential of a provider is usable at all, the provider itself is rate limited. */
  private noteProviderWideLimit(provider: string, pool: RelayCredentialPool): void {
    try {
      pool.acquire();
    } catch {
      this.options.cooldowns?.recordFailure(provider, { kind: 'rate_limit' });
    }
  }

  private async attempt(
    request: RelayRequest,
    sink: ResponseSink,
    route: Route,
    provider: string,
    credential: RelayCredential | undefined,
    startedAt: number,
    attempt: number,
    upstreamModel = route.upstreamModel.get(provider) ?? request.model,
  ): Promise<AttemptResult> {
    const config = this.table.provider(provider)!;
    const adapter = this.adapters.get(config.kind)!;
    const attemptStart = this.clock.now();
    route.selector.begin(provider);
    let result: AttemptResult;
    try {
      const exchange = prepareExchange({
        request,
        adapter,
        provider: config,
        credential,
        upstreamModel,
        now: this.clock.now(),
      });
      result = await runAttempt({
        exchange,
        adapter,
        transport: adapter.transport ?? this.transport,
        stream: request.stream,
        sink,
        responseHeaders: { 'x-request-id': request.requestId, 'x-switchyard-provider': provider },
        describeFailure: (failure) => failureToClient(failure, false),
        keepAlive: { intervalMs: this.options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS, scheduler: this.scheduler },
        // The client's own signal: an AbortSignal costs microseconds to create, too much to mirror per attempt.
        ...(request.signal ? { signal: request.signal } : {}),
        now: () => this.clock.now(),
        startedAt,
      });
    } catch (error) {
      result =
        error instanceof TranslationError
          ? { kind: 'failure', failure: clientFailure(request.ingress, error, request.requestId) }
          : { kind: 'failure', failure: { kind: 'server', status: null, message: `provider ${provider}: ${(error as Error).message}` } };
    } finally {
      route.selector.end(provider);
    }
    const failure = result.kind === 'success' ? undefined : result.failure;
    if (this.events.listenerCount('attempt:end') > 0)
      this.events.emit('attempt:end', {
        requestId: request.requestId,
        provider,
        credentialId: credential?.id ?? null,
        attempt,
        outcome: result.kind === 'success' ? 'success' : 'error',
        httpStatus: result.kind === 'success' ? result.status : (failure?.status ?? null),
        errorType: failure?.kind ?? null,
        latencyMs: this.clock.now() - attemptStart,
        at: this.clock.now(),
      });
    return result;
  }

  /** Records a failed attempt; returns a refreshed credential when the same provider should be tried again with it. */
  private async handleFailure(
    provider: string,
    credential: RelayCredential | undefined,
    failure: UpstreamFailure,
    state: RequestState,
  ): Promise<RelayCredential | undefined> {
    const pool = this.options.credentials?.pool(provider);
    const tried = state.triedCredentials.get(provider) ?? new Set<string>();
    state.triedCredentials.set(provider, tried);
    if (failure.kind === 'unauthorized' && credential && pool && credential.type === 'oauth' && !state.refreshed.has(credential.id)) {
      state.refreshed.add(credential.id);
      try {
        return await pool.refresh(credential.id);
      } catch {
        // Refresh failed: fall through and rotate.
      }
    }
    if (credential) {
      tried.add(credential.id);
      if (pool) {
        const kind =
          failure.kind === 'rate_limit' || failure.kind === 'unauthorized' || failure.kind === 'quota_exceeded' ? failure.kind : 'error';
        pool.reportFailure(credential.id, {
          kind,
          ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
          message: failure.message,
        });
      }
    }
    if (failure.kind === 'quota_exceeded') {
      state.quota = { provider, credential };
      if (credential) this.quotaMemory.refusedForQuota(provider, credential.id);
      // switch-project off: the 429 goes back rather than trying another credential.
      if (!this.quotaSettings.switchCredential) state.quotaStop = true;
    }
    if (failure.kind === 'rate_limit' && !pool) this.options.cooldowns?.recordFailure(provider, { kind: 'rate_limit', ...retry(failure) });
    if (failure.kind === 'server' || failure.kind === 'timeout' || failure.kind === 'connection') {
      this.recordProviderFailure(provider, failure);
      state.exhausted.add(provider);
      state.serverFailed.add(provider);
    }
    return undefined;
  }

  private recordProviderFailure(provider: string, failure: UpstreamFailure): void {
    if (failure.kind === 'server' || failure.kind === 'timeout' || failure.kind === 'connection') {
      this.options.cooldowns?.recordFailure(provider, {
        kind: 'error',
        ...(failure.status !== null ? { status: failure.status } : {}),
        ...retry(failure),
      });
      this.options.health?.recordRequest(provider, { ok: false, latencyMs: 0 });
    }
  }

  private recordSuccess(provider: string, credential: RelayCredential | undefined, usage: Usage | undefined, latencyMs: number): void {
    if (credential) this.options.credentials?.pool(provider)?.reportSuccess(credential.id, tokensOf(usage));
    this.options.cooldowns?.recordSuccess(provider);
    this.options.health?.recordRequest(provider, { ok: true, latencyMs });
    this.table.recordLatency(provider, latencyMs);
  }

  private fail(request: RelayRequest, sink: ResponseSink, failure: RelayFailure): void {
    if (sink.headersSent || sink.closed) return;
    const { body, headers } = ingressFormat(request.ingress).errorResponse(failure, request.requestId);
    sink.writeHead(failure.status, { ...headers, 'x-request-id': request.requestId });
    sink.end(body);
  }

  /** A client error from the upstream (a bad parameter, say) goes back as the upstream said it. */
  private passThroughClientError(request: RelayRequest, sink: ResponseSink, failure: UpstreamFailure): void {
    if (sink.headersSent || sink.closed) return;
    const status = failure.status ?? 400;
    const body = failure.body && failure.body.length > 0 ? failure.body : undefined;
    if (body) {
      sink.writeHead(status, {
        'content-type': failure.headers?.['content-type'] ?? 'application/json',
        'x-request-id': request.requestId,
      });
      sink.end(body);
      return;
    }
    this.fail(request, sink, {
      status,
      code: 'upstream_error',
      type: 'invalid_request_error',
      message: failure.message,
      upstreamStatus: status,
    });
  }

  /** A fresh request id (`X-Request-Id` when the client sent none). */
  static requestId(): string {
    return randomUUID();
  }
}

const retry = (failure: UpstreamFailure) => (failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {});
const usageOf = (usage: Usage | undefined) => usage ?? { input: 0, output: 0 };
const tokensOf = (usage: Usage | undefined) => (usage ? { inputTokens: usage.input, outputTokens: usage.output } : undefined);
