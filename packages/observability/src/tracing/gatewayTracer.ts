/**
 * @module gatewayTracer
 * Spans from relay events: one SERVER span per client request, with a
 * child span for each selection (choosing the candidate) and a CLIENT span
 * for each upstream attempt. Events carry their own times, so spans get
 * exact start and end times even though they are built after the fact.
 *
 * Trace context flows both ways: {@link GatewayTracer.continueFrom} makes a
 * request's span a child of the client's `traceparent`, and
 * {@link GatewayTracer.upstreamHeaders} gives the relay the `traceparent`
 * to send upstream, naming the attempt's span as the parent.
 */
import { type Context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Clock } from '@switchyard/runtime';
import type { AttemptEndEvent, EventObserver, RequestEndEvent, RequestStartEvent } from '../events.js';

/** Options of {@link GatewayTracer}. */
export interface GatewayTracerOptions {
  clock: Clock;
  /** Requests tracked at most; past it the oldest open one is ended as abandoned (default 10,000). */
  maxOpenRequests?: number;
}

interface OpenRequest {
  span: Span;
  context: Context;
  /** End of the last attempt (or the request start): where the next selection begins. */
  boundary: number;
  attempts: Map<number, Span>;
}

type Carrier = Record<string, string | string[] | undefined>;

const getter = {
  keys: (carrier: Carrier) => Object.keys(carrier),
  get: (carrier: Carrier, key: string) => {
    const direct = carrier[key] ?? carrier[key.toLowerCase()];
    if (direct !== undefined) return direct;
    const found = Object.keys(carrier).find((k) => k.toLowerCase() === key);
    return found === undefined ? undefined : carrier[found];
  },
};
const setter = { set: (carrier: Record<string, string>, key: string, value: string) => void (carrier[key] = value) };

/**
 * Builds request, selection and attempt spans from relay events.
 *
 * @example
 * ```ts
 * const tracing = createTracing(config.tracing);
 * observeGateway({ relay }, { tracing: tracing.gateway });
 * // in the server, before the relay starts:  tracing.gateway.continueFrom(requestId, req.headers);
 * // in the relay, per upstream call:          Object.assign(headers, tracing.gateway.upstreamHeaders(requestId, provider, attempt));
 * ```
 */
export class GatewayTracer implements EventObserver {
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly open = new Map<string, OpenRequest>();
  private readonly incoming = new Map<string, Context>();
  private readonly maxOpen: number;
  private readonly clock: Clock;

  constructor(
    private readonly tracer: Tracer,
    options: GatewayTracerOptions,
  ) {
    this.clock = options.clock;
    this.maxOpen = options.maxOpenRequests ?? 10_000;
  }

  /** Requests with an open span (for tests and leak checks). */
  get openRequests(): number {
    return this.open.size;
  }

  /**
   * Makes the coming request's span a child of the client's trace context
   * (`traceparent`, `tracestate` in `headers`). Call before the relay emits
   * `request:start`.
   */
  continueFrom(requestId: string, headers: Carrier): void {
    const context = this.propagator.extract(ROOT_CONTEXT, headers, getter);
    if (trace.getSpanContext(context) === undefined) return;
    this.incoming.set(requestId, context);
    if (this.incoming.size > this.maxOpen) this.incoming.delete(this.incoming.keys().next().value!);
  }

  /**
   * The W3C trace-context headers for an upstream call. Starts the attempt's
   * span now (and closes the selection span before it), so the upstream's
   * spans hang under this attempt. Empty when the request is not traced.
   */
  upstreamHeaders(requestId: string, provider: string, attempt: number): Record<string, string> {
    const request = this.open.get(requestId);
    if (!request) return {};
    let span = request.attempts.get(attempt);
    if (!span) {
      const now = this.clock.now();
      this.selectionSpan(request, now, provider);
      span = this.attemptSpan(request, provider, attempt, now);
      request.attempts.set(attempt, span);
    }
    const headers: Record<string, string> = {};
    this.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, setter);
    return headers;
  }

  onRequestStart(event: RequestStartEvent): void {
    const parent = this.incoming.get(event.requestId) ?? ROOT_CONTEXT;
    this.incoming.delete(event.requestId);
    const span = this.tracer.startSpan(
      'gateway.request',
      {
        kind: SpanKind.SERVER,
        startTime: event.at,
        attributes: {
          'switchyard.request_id': event.requestId,
          'gen_ai.request.model': event.model,
          'switchyard.ingress': event.ingress,
          'switchyard.stream': event.stream,
        },
      },
      parent,
    );
    this.open.set(event.requestId, { span, context: trace.setSpan(parent, span), boundary: event.at, attempts: new Map() });
    if (this.open.size > this.maxOpen) this.abandon(this.open.keys().next().value!);
  }

  onAttemptEnd(event: AttemptEndEvent): void {
    const request = this.open.get(event.requestId);
    if (!request) return;
    let span = request.attempts.get(event.attempt);
    if (span) request.attempts.delete(event.attempt);
    else {
      const startedAt = Math.max(request.boundary, event.at - event.latencyMs);
      this.selectionSpan(request, startedAt, event.provider);
      span = this.attemptSpan(request, event.provider, event.attempt, startedAt);
    }
    if (event.credentialId !== null) span.setAttribute('switchyard.credential_id', event.credentialId);
    if (event.httpStatus !== null) span.setAttribute('http.response.status_code', event.httpStatus);
    if (event.outcome === 'error') {
      span.setAttribute('error.type', event.errorType ?? 'error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.errorType ?? 'upstream error' });
    } else if (event.outcome === 'client_closed') span.setAttribute('switchyard.client_closed', true);
    span.end(event.at);
    request.boundary = event.at;
  }

  onRequestEnd(event: RequestEndEvent): void {
    const request = this.open.get(event.requestId);
    if (!request) return;
    this.open.delete(event.requestId);
    for (const span of request.attempts.values()) span.end(event.at);
    // A request that never reached an upstream still spent its time choosing (every candidate cooling, say).
    if (event.attempts === 0 && !event.cached) this.selectionSpan(request, event.at, event.provider, event.errorType);
    const span = request.span;
    span.setAttributes({
      'gen_ai.usage.input_tokens': event.tokens.input,
      'gen_ai.usage.output_tokens': event.tokens.output,
      'http.response.status_code': event.httpStatus,
      'switchyard.attempts': event.attempts,
      'switchyard.cached': event.cached,
    });
    if (event.provider !== null) span.setAttribute('gen_ai.provider.name', event.provider);
    if (event.ttfbMs !== null) span.setAttribute('switchyard.ttfb_ms', event.ttfbMs);
    if (event.outcome === 'error') {
      span.setAttribute('error.type', event.errorType ?? 'error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.errorType ?? 'request failed' });
    } else if (event.outcome === 'client_closed') span.setAttribute('switchyard.client_closed', true);
    span.end(event.at);
  }

  private selectionSpan(request: OpenRequest, endAt: number, provider: string | null, failure?: string | null): void {
    const span = this.tracer.startSpan('gateway.select', { kind: SpanKind.INTERNAL, startTime: request.boundary }, request.context);
    if (provider !== null) span.setAttribute('switchyard.selected', provider);
    if (failure) span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
    span.end(Math.max(request.boundary, endAt));
  }

  private attemptSpan(request: OpenRequest, provider: string, attempt: number, startAt: number): Span {
    return this.tracer.startSpan(
      'gateway.attempt',
      {
        kind: SpanKind.CLIENT,
        startTime: startAt,
        attributes: { 'gen_ai.provider.name': provider, 'switchyard.attempt': attempt },
      },
      request.context,
    );
  }

  private abandon(requestId: string): void {
    const request = this.open.get(requestId);
    if (!request) return;
    this.open.delete(requestId);
    const now = this.clock.now();
    for (const span of request.attempts.values()) span.end(now);
    request.span.setAttribute('switchyard.abandoned', true);
    request.span.setStatus({ code: SpanStatusCode.ERROR, message: 'no request:end before the open-request limit' });
    request.span.end(now);
  }
}
