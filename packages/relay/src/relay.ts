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
 *    the attempt budget, and never once the client has gone (`client_closed`,
 *    which counts against no provider or credential);
 * 6. afterwards usage is reported (the pool deducts quota), and latency,
 *    cost and outcome go out as events.
 *
 * A credential out of quota is handled as `quotaPolicy` says (rotate or
 * return the 429; one retry with a preview model).
 *
 * This module holds the pipeline itself (the attempt loop in
 * {@link Relay.handle}); its steps live next to it: `candidatePicker` (2),
 * `attemptRunner` (3), `attemptRecorder` (4, 6), `quotaHooks` (quota),
 * `availability` (keeping cooling and unhealthy providers out of selection),
 * `outcome` (what the client is told), and `relayOptions` (options and ports).
 */
import { randomUUID } from 'node:crypto';
import type { RelayEvents, RequestEndEvent } from '@switchyard/core-routing';
import { systemClock, systemScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import { AttemptRecorder } from './attemptRecorder.js';
import { AttemptRunner } from './attemptRunner.js';
import { applyAvailability, followAvailability } from './availability.js';
import { CandidatePicker } from './candidatePicker.js';
import { defaultAdapters } from './defaultAdapters.js';
import type { RelayFailure } from './errors.js';
import { NodeFailover } from './failover.js';
import { failureToClient, passThroughClientError, writeFailure } from './outcome.js';
import type { ProviderAdapter } from './providers/adapter.js';
import { QuotaHooks } from './quotaHooks.js';
import type { RelayContext, RelayOptions } from './relayOptions.js';
import { newRequestState, type PinnedAttempt, type RequestState } from './requestState.js';
import { RecordingSink } from './responseCache.js';
import { type Route, RoutingTable } from './routingTable.js';
import type { ResponseSink } from './sink.js';
import type { RelayCredential, RelayRequest, Usage } from './types.js';
import { UndiciTransport } from './upstream.js';

export { defaultAdapters } from './defaultAdapters.js';
export type { RelayCooldowns, RelayCredentialPool, RelayHealth, RelayOptions } from './relayOptions.js';

/** What a request's end event says beyond its identity and timing. */
type EndFields = Omit<RequestEndEvent, 'requestId' | 'model' | 'client' | 'latencyMs' | 'at'>;

/** How a request ends (its `request:end` event), and what its attempts need from before them. */
interface RequestEnds {
  startedAt: number;
  /** Emits `request:end` with these fields. */
  end: (fields: EndFields) => RequestEndEvent;
  /** {@link end}, saying only what differs from "no provider, nothing sent, nothing used, not cached". */
  finish: (fields: Pick<EndFields, 'outcome' | 'httpStatus'> & Partial<EndFields>) => RequestEndEvent;
  cacheKey: string | undefined;
  recording: RecordingSink | undefined;
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
  /** What the parts below share, the current options included. */
  private readonly ctx: RelayContext;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly quota: QuotaHooks;
  private readonly picker: CandidatePicker;
  private readonly runner: AttemptRunner;
  private readonly recorder: AttemptRecorder;

  constructor(options: RelayOptions) {
    const clock = options.clock ?? options.scheduler ?? systemClock;
    const scheduler = options.scheduler ?? systemScheduler;
    const adapters = options.adapters ?? defaultAdapters();
    const transport = options.transport ?? new UndiciTransport();
    this.table = new RoutingTable(options.providers, {
      strategy: options.strategy ?? 'round_robin',
      clock,
      ...(options.latencyWindowMs !== undefined ? { latencyWindowMs: options.latencyWindowMs } : {}),
    });
    this.ctx = { options, table: this.table, adapters, transport, clock, scheduler, events: this.events };
    this.quota = new QuotaHooks(this.ctx);
    this.picker = new CandidatePicker(this.ctx, this.quota);
    this.runner = new AttemptRunner(this.ctx);
    this.recorder = new AttemptRecorder(this.ctx, this.quota);
    // Holds providers out of selection while they cool down or are unhealthy, and lets them back after.
    this.unsubscribe.push(...followAvailability(this.table, options));
    this.resyncAvailability();
  }

  /** Re-applies the current cooldown and health state to every provider (after a reload). */
  resyncAvailability(): void {
    applyAvailability(this.table, this.ctx.options);
  }

  /** Stops following cooldown and health events. */
  close(): void {
    for (const off of this.unsubscribe.splice(0)) off();
  }

  /** Applies new providers, strategy or attempt budget without dropping requests in flight. */
  configure(options: Partial<Pick<RelayOptions, 'providers' | 'strategy' | 'maxAttempts' | 'keepAliveMs' | 'quotaExceeded'>>): void {
    this.ctx.options = { ...this.ctx.options, ...options };
    this.table.configure(this.ctx.options.providers, this.ctx.options.strategy ?? 'round_robin');
    this.resyncAvailability();
  }

  /** The models the providers serve, for `GET /v1/models`. */
  models() {
    return this.table.models();
  }

  /** The adapter of a provider kind. */
  adapter(kind: string): ProviderAdapter | undefined {
    return this.ctx.adapters.get(kind);
  }

  /** The provider kinds this relay can talk to. */
  adapterKinds(): string[] {
    return this.ctx.adapters.kinds();
  }

  /** Handles one request, writing the answer (or an error in the client's format) to `sink`. */
  async handle(request: RelayRequest, sink: ResponseSink): Promise<RequestEndEvent> {
    const startedAt = this.ctx.clock.now();
    // Events with no listener are not built: this runs for every request.
    if (this.events.listenerCount('request:start') > 0)
      this.events.emit('request:start', {
        requestId: request.requestId,
        model: request.model,
        ingress: request.ingress,
        stream: request.stream,
        client: request.client ?? null,
        at: startedAt,
      });
    // One literal with every field, in one order: each event has the same hidden class, so its listeners'
    // property reads stay monomorphic, and no spread copies the fields twice (this runs for every request).
    const end = (fields: EndFields): RequestEndEvent => {
      const at = this.ctx.clock.now();
      const event: RequestEndEvent = {
        requestId: request.requestId,
        model: request.model,
        client: request.client ?? null,
        provider: fields.provider,
        credentialId: fields.credentialId,
        outcome: fields.outcome,
        httpStatus: fields.httpStatus,
        errorType: fields.errorType,
        latencyMs: at - startedAt,
        ttfbMs: fields.ttfbMs,
        tokens: fields.tokens,
        cached: fields.cached,
        attempts: fields.attempts,
        at,
      };
      this.events.emit('request:end', event);
      return event;
    };
    /** Ends the request, saying only what differs from "no provider, nothing sent, nothing used, not cached". */
    const finish = (fields: Pick<EndFields, 'outcome' | 'httpStatus'> & Partial<EndFields>): RequestEndEvent =>
      end({
        provider: fields.provider ?? null,
        credentialId: fields.credentialId ?? null,
        outcome: fields.outcome,
        httpStatus: fields.httpStatus,
        errorType: fields.errorType ?? null,
        ttfbMs: fields.ttfbMs ?? null,
        // A fresh `tokens` each time: subscribers may keep the event.
        tokens: fields.tokens ?? { input: 0, output: 0 },
        cached: fields.cached ?? false,
        attempts: fields.attempts ?? 0,
      });

    const cache = this.ctx.options.cache;
    // No key is computed unless the cache is on and takes this kind of request.
    const cacheKey = cache?.admits(request) ? cache.key(request.ingress, request.body, request.cacheScope) : undefined;
    let recording: RecordingSink | undefined;
    if (cacheKey) {
      const hit = cache!.get(cacheKey);
      if (hit) {
        sink.writeHead(hit.status, { ...hit.headers, 'x-request-id': request.requestId, 'x-switchyard-cache': 'hit' });
        sink.end(hit.body);
        return finish({ provider: hit.provider, outcome: 'success', httpStatus: hit.status, ttfbMs: 0, cached: true });
      }
      if (request.stream) {
        recording = new RecordingSink(sink);
        sink = recording;
      }
    }

    const failover = this.ctx.options.failover;
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
      writeFailure(request, sink, failure);
      return finish({ outcome: 'error', httpStatus: 404, errorType: failure.code });
    }

    const state = newRequestState();
    try {
      return await this.serve(request, sink, route, state, { startedAt, end, finish, cacheKey, recording });
    } finally {
      // Provider failures no sibling credential recovered count now (attemptRecorder).
      this.recorder.settle(state);
    }
  }

  /** Tries candidates until one answers, the budget is spent or nothing is left; writes the answer or the failure. */
  private async serve(
    request: RelayRequest,
    sink: ResponseSink,
    route: Route,
    state: RequestState,
    { startedAt, end, finish, cacheKey, recording }: RequestEnds,
  ): Promise<RequestEndEvent> {
    const cache = this.ctx.options.cache;
    const failover = this.ctx.options.failover;
    const maxAttempts = Math.max(1, this.ctx.options.maxAttempts ?? 3);
    let pinned: PinnedAttempt | undefined;
    let lastProvider: string | null = null;
    let lastCredential: string | null = null;

    while (!request.signal?.aborted) {
      if (state.attempts >= maxAttempts || state.quotaStop) {
        // The preview-model retry is the one attempt allowed past the budget.
        if (!pinned?.preview) pinned = this.quota.previewRetry(request, route, state, sink);
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
        const picked = this.picker.pick(route, state, request);
        if ('failure' in picked) {
          pinned = this.quota.previewRetry(request, route, state, sink);
          if (pinned) continue;
          const backup = failover?.backupFor(request.forwarded === true);
          if (backup) {
            // active_passive: nothing here can serve it; the backup gateway may.
            const forwarded = await failover!.forward(backup, request, sink);
            if (forwarded.kind === 'answered') return end(this.forwardedEnd(backup, forwarded.status));
          }
          writeFailure(request, sink, picked.failure);
          return finish({
            provider: lastProvider,
            credentialId: lastCredential,
            outcome: 'error',
            httpStatus: picked.failure.status,
            errorType: picked.failure.code,
            attempts: state.attempts,
          });
        }
        if (picked.retry) continue;
        ({ provider, credential } = picked);
      }
      // Cluster mode: room in the credential's shared quota, held until the attempt settles.
      let reservation: string | undefined;
      const admission = credential ? this.quota.admit(provider, credential, request, state) : undefined;
      if (admission) {
        const admitted = await admission;
        if (!admitted) continue;
        reservation = admitted.reservation;
      }
      if (!this.table.servingProvider(provider)) {
        // A reload removed or disabled it while this attempt waited (a token refresh, a quota admission).
        this.quota.release(provider, credential, reservation);
        state.exhausted.add(provider);
        continue;
      }
      state.attempts++;
      lastProvider = provider;
      lastCredential = credential?.id ?? null;
      if (credential) this.quota.served(provider, credential.id);
      let result: Awaited<ReturnType<AttemptRunner['run']>>;
      try {
        result = await this.runner.run(request, sink, route, provider, credential, startedAt, state.attempts, upstreamModel);
      } catch (error) {
        this.quota.release(provider, credential, reservation);
        throw error;
      }
      if (result.kind === 'success') {
        this.recorder.success(provider, credential, result.usage, this.ctx.clock.now() - startedAt, state, reservation);
        if (cacheKey) {
          const answer = recording
            ? recording.recorded()
            : result.body && { status: result.status, headers: result.headers, body: result.body };
          if (answer) cache!.set(cacheKey, { ...answer, provider, usage: result.usage });
        }
        return finish({
          provider,
          credentialId: credential?.id ?? null,
          outcome: 'success',
          httpStatus: result.status,
          ttfbMs: result.ttfbMs,
          tokens: usageOf(result.usage),
          attempts: state.attempts,
        });
      }
      const failure = result.failure;
      state.lastFailure = failure;
      if (result.kind === 'broken') {
        this.recorder.broken(provider, credential, failure, { usage: result.usage, reservation }, state);
        return finish({
          provider,
          credentialId: credential?.id ?? null,
          outcome: failure.kind === 'client_closed' ? 'client_closed' : 'error',
          httpStatus: 200,
          errorType: failure.kind,
          ttfbMs: result.ttfbMs,
          tokens: usageOf(result.usage),
          attempts: state.attempts,
        });
      }
      // Failed before any usage: whatever was held for it goes back.
      this.quota.release(provider, credential, reservation);
      // The client left: nobody is listening for another try.
      if (failure.kind === 'client_closed') break;
      if (failure.kind === 'client') {
        passThroughClientError(request, sink, failure);
        return finish({
          provider,
          credentialId: credential?.id ?? null,
          outcome: 'error',
          httpStatus: failure.status ?? 400,
          errorType: 'client',
          attempts: state.attempts,
        });
      }
      const retrySame = await this.recorder.failure(provider, credential, failure, state);
      if (retrySame) pinned = { provider, credential: retrySame, ...(preview ? { upstreamModel, preview } : {}) };
      else if (preview) break;
    }
    const clientClosed = request.signal?.aborted === true || state.lastFailure?.kind === 'client_closed';
    const backup = clientClosed ? undefined : failover?.backupFor(request.forwarded === true);
    if (backup && !sink.headersSent) {
      // active_passive: every attempt here failed before its first byte (the primary's upstream is down
      // before health checks and cooldowns have noticed); the backup gateway may still serve it.
      const forwarded = await failover!.forward(backup, request, sink);
      if (forwarded.kind === 'answered') return end(this.forwardedEnd(backup, forwarded.status));
    }
    const failure = failureToClient(state.lastFailure, clientClosed);
    writeFailure(request, sink, failure);
    return finish({
      provider: lastProvider,
      credentialId: lastCredential,
      outcome: clientClosed ? 'client_closed' : 'error',
      httpStatus: failure.status,
      errorType: clientClosed ? 'client_closed' : (state.lastFailure?.kind ?? failure.code),
      attempts: state.attempts,
    });
  }

  private forwardedEnd(node: string, status: number): EndFields {
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

  /** A fresh request id (`X-Request-Id` when the client sent none). */
  static requestId(): string {
    return randomUUID();
  }
}

const usageOf = (usage: Usage | undefined) => usage ?? { input: 0, output: 0 };
