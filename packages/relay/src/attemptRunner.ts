/**
 * @module attemptRunner
 * Runs one attempt on the provider and credential picked for it: builds the
 * exchange (the upstream request, translated when the provider speaks
 * another API family), counts the attempt in flight for the provider
 * strategy, hands it to {@link runAttempt}, turns anything thrown into a
 * failure, and emits `attempt:end`. What to do with the result is the
 * relay's decision, not this module's.
 */
import { TranslationError } from '@switchyard/translate';
import { type AttemptResult, runAttempt } from './attempt.js';
import { clientFailure, prepareExchange } from './exchange.js';
import { failureToClient } from './outcome.js';
import type { RelayContext } from './relayOptions.js';
import type { Route } from './routingTable.js';
import type { ResponseSink } from './sink.js';
import type { RelayCredential, RelayRequest } from './types.js';

const DEFAULT_KEEP_ALIVE_MS = 15_000;

/** Runs a relay's attempts; one per relay. */
export class AttemptRunner {
  constructor(private readonly ctx: RelayContext) {}

  /** One attempt of `request` on `provider`; `attempt` counts from 1, `startedAt` is when the request arrived. */
  async run(
    request: RelayRequest,
    sink: ResponseSink,
    route: Route,
    provider: string,
    credential: RelayCredential | undefined,
    startedAt: number,
    attempt: number,
    upstreamModel = route.upstreamModel.get(provider) ?? request.model,
  ): Promise<AttemptResult> {
    const { ctx } = this;
    const config = ctx.table.provider(provider)!;
    const adapter = ctx.adapters.get(config.kind)!;
    const attemptStart = ctx.clock.now();
    route.selector.begin(provider);
    let result: AttemptResult;
    try {
      const exchange = prepareExchange({
        request,
        adapter,
        provider: config,
        credential,
        upstreamModel,
        now: ctx.clock.now(),
      });
      const extraHeaders = ctx.options.upstreamHeaders;
      // A copy: an embedder's adapter may hand out one headers object for every request.
      if (extraHeaders && exchange.request) {
        const headers = { ...exchange.request.headers, ...extraHeaders(request.requestId, provider, attempt) };
        exchange.request = { ...exchange.request, headers };
      }
      result = await runAttempt({
        exchange,
        adapter,
        transport: adapter.transport ?? ctx.transport,
        stream: request.stream,
        sink,
        responseHeaders: { 'x-request-id': request.requestId, 'x-switchyard-provider': provider },
        describeFailure: (failure) => failureToClient(failure, false),
        keepAlive: { intervalMs: ctx.options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS, scheduler: ctx.scheduler },
        // The client's own signal: an AbortSignal costs microseconds to create, too much to mirror per attempt.
        ...(request.signal ? { signal: request.signal } : {}),
        now: () => ctx.clock.now(),
        startedAt,
      });
    } catch (error) {
      // A request that cannot be translated is the client's to fix (400); an answer that cannot be
      // (`invalid_response`) is the provider's, like any bad upstream answer: a server failure, tried elsewhere.
      result =
        error instanceof TranslationError && error.code !== 'invalid_response'
          ? { kind: 'failure', failure: clientFailure(request.ingress, error, request.requestId) }
          : { kind: 'failure', failure: { kind: 'server', status: null, message: `provider ${provider}: ${(error as Error).message}` } };
    } finally {
      route.selector.end(provider);
    }
    const failure = result.kind === 'success' ? undefined : result.failure;
    // Events with no listener are not built: this runs for every attempt.
    if (ctx.events.listenerCount('attempt:end') > 0)
      ctx.events.emit('attempt:end', {
        requestId: request.requestId,
        provider,
        credentialId: credential?.id ?? null,
        attempt,
        outcome: result.kind === 'success' ? 'success' : failure?.kind === 'client_closed' ? 'client_closed' : 'error',
        httpStatus: result.kind === 'success' ? result.status : (failure?.status ?? null),
        errorType: failure?.kind ?? null,
        latencyMs: ctx.clock.now() - attemptStart,
        at: ctx.clock.now(),
      });
    return result;
  }
}
