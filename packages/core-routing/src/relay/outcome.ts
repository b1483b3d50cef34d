/**
 * @module outcome
 * Maps what went wrong upstream to what the client is told. The rule: the
 * client's status reflects whose fault it is. An upstream's 5xx, timeout or
 * refused connection is a 502 or 504 (never a 500, which would blame the
 * gateway); a rate limit is a 429 with the upstream's `Retry-After`; every
 * provider cooling down is a 429 with the time the first one returns.
 */
import { AllProvidersInCooldown, NoProviderAvailable } from '../errors.js';
import type { RelayFailure } from './errors.js';
import type { UpstreamFailure } from './types.js';

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** The client-facing failure after the last attempt failed with `failure`. */
export function failureToClient(failure: UpstreamFailure | undefined, aborted: boolean): RelayFailure {
  if (aborted) return { status: 499, code: 'upstream_error', type: 'server_error', message: 'the client closed the request' };
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
