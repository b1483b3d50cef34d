/**
 * @module outcome
 * Maps what went wrong upstream to what the client is told. The rule: the
 * client's status reflects whose fault it is. An upstream's 5xx, timeout or
 * refused connection is a 502 or 504 (never a 500, which would blame the
 * gateway); a rate limit is a 429 with the upstream's `Retry-After`; every
 * provider cooling down is a 429 with the time the first one returns; a
 * client that closed the request is a 499.
 *
 * It also writes that failure to the client, in the client's own API format,
 * unless the response has already started.
 */
import { AllProvidersInCooldown, NoProviderAvailable } from '@switchyard/core-routing';
import type { RelayFailure } from './errors.js';
import { ingressFormat } from './ingressFormat.js';
import type { ResponseSink } from './sink.js';
import type { RelayRequest, UpstreamFailure } from './types.js';

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * The client-facing failure after the last attempt failed with `failure`. A client that went away
 * (`aborted`, or the attempt cut off as `client_closed`) gets Nginx's 499: nobody reads it, but
 * logs and metrics see whose doing it was.
 */
export function failureToClient(failure: UpstreamFailure | undefined, aborted: boolean): RelayFailure {
  if (aborted || failure?.kind === 'client_closed')
    return { status: 499, code: 'client_closed', type: 'invalid_request_error', message: 'the client closed the request' };
  if (!failure) return { status: 503, code: 'no_provider_available', type: 'server_error', message: 'no provider is available' };
  const upstream = failure.status ?? undefined;
  const base = {
    code: 'upstream_error' as const,
    message: failure.message,
    ...(upstream !== undefined ? { upstreamStatus: upstream } : {}),
  };
  switch (failure.kind) {
    case 'rate_limit':
    case 'quota_exceeded':
      return {
        ...base,
        ...(failure.kind === 'quota_exceeded' ? { code: 'quota_exceeded' as const } : {}),
        status: 429,
        type: 'rate_limit_error',
        ...(failure.retryAfterMs !== undefined ? { retryAfterSeconds: seconds(failure.retryAfterMs) } : {}),
      };
    case 'timeout':
      return { ...base, status: 504, type: 'server_error' };
    case 'client':
      return { ...base, status: upstream ?? 400, type: 'invalid_request_error' };
    default:
      return { ...base, status: 502, type: 'server_error' };
  }
}

/** The client-facing failure when no candidate could be picked. */
export function selectionFailure(
  error: unknown,
  state: { lastFailure: UpstreamFailure | undefined; noCredentials: ReadonlySet<string>; attempts: number },
  now: number,
): RelayFailure {
  if (error instanceof AllProvidersInCooldown) {
    return {
      status: 429,
      code: 'all_providers_in_cooldown',
      type: 'rate_limit_error',
      message: `every provider for this model is cooling down; the first returns at ${new Date(error.retryAt).toISOString()}`,
      retryAfterSeconds: seconds(error.retryAt - now),
    };
  }
  if (state.lastFailure) return failureToClient(state.lastFailure, false);
  if (error instanceof NoProviderAvailable && state.noCredentials.size > 0) {
    return {
      status: 503,
      code: 'no_credentials',
      type: 'server_error',
      message: `no usable credentials for ${[...state.noCredentials].join(', ')}`,
    };
  }
  const message = error instanceof Error ? error.message : 'no provider is available';
  return { status: 503, code: 'no_provider_available', type: 'server_error', message };
}

/** Answers `request` with `failure`, in the client's format; a response already started or closed is left alone. */
export function writeFailure(request: RelayRequest, sink: ResponseSink, failure: RelayFailure): void {
  if (sink.headersSent || sink.closed) return;
  const { body, headers } = ingressFormat(request.ingress).errorResponse(failure, request.requestId);
  sink.writeHead(failure.status, { ...headers, 'x-request-id': request.requestId });
  sink.end(body);
}

/** A client error from the upstream (a bad parameter, say) goes back as the upstream said it. */
export function passThroughClientError(request: RelayRequest, sink: ResponseSink, failure: UpstreamFailure): void {
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
  writeFailure(request, sink, {
    status,
    code: 'upstream_error',
    type: 'invalid_request_error',
    message: failure.message,
    upstreamStatus: status,
  });
}
