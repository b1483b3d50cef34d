/**
 * @module http
 * Pieces every HTTP provider kind shares: the base URL, the body with the
 * upstream model name, and the classification of an error answer (whatever
 * the family's error shape, and whichever way it says how long to wait).
 */
import { describeUpstreamError } from '@switchyard/translate';
import { retryAfterMs } from '../retryAfter.js';
import type { ProviderConfig, UpstreamFailure } from '../types.js';
import type { BuildInput } from './adapter.js';

const decoder = new TextDecoder();

/** The provider's base URL without a trailing slash; throws when a kind without a default has none. */
export function baseUrlOf(provider: ProviderConfig, fallback: string | undefined): string {
  const url = provider.baseUrl ?? fallback;
  if (!url) throw new Error(`provider ${provider.name} (${provider.kind}) needs base_url`);
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

/** The body with `model` set to the upstream name: the client's bytes when it already is. */
export function bodyWithModel(input: BuildInput): Uint8Array | string {
  if (input.body.model === input.upstreamModel) return input.rawBody;
  return JSON.stringify({ ...input.body, model: input.upstreamModel });
}

/** The earliest of Anthropic's `anthropic-ratelimit-*-reset` times (RFC 3339), as a wait from `now`. */
function anthropicResetMs(headers: Record<string, string>, now: number): number | undefined {
  let earliest: number | undefined;
  for (const name of ['anthropic-ratelimit-requests-reset', 'anthropic-ratelimit-tokens-reset', 'anthropic-ratelimit-input-tokens-reset']) {
    const at = headers[name] ? Date.parse(headers[name]) : Number.NaN;
    if (!Number.isNaN(at)) earliest = Math.min(earliest ?? Number.POSITIVE_INFINITY, Math.max(0, at - now));
  }
  return earliest;
}

/**
 * Classifies an upstream's error answer, in any family's shape: 429 is a
 * rate limit (or exhausted quota, when the body says `insufficient_quota`),
 * 401/403 a credential problem, 408/409/5xx and Anthropic's 529 server
 * trouble worth another try, anything else the client's own fault.
 *
 * @example
 * ```ts
 * classifyUpstreamError(429, { 'retry-after': '3' }, body, Date.now()); // { kind: 'rate_limit', retryAfterMs: 3000, … }
 * ```
 */
export function classifyUpstreamError(status: number, headers: Record<string, string>, body: Uint8Array, now: number): UpstreamFailure {
  let described: ReturnType<typeof describeUpstreamError>;
  try {
    described = describeUpstreamError(JSON.parse(decoder.decode(body)));
  } catch {
    // Not JSON: keep the generic message; the body is still passed through for client errors.
  }
  const base = { status, message: described?.message ?? `upstream answered ${status}`, body, headers };
  const wait = retryAfterMs(headers, now) ?? described?.retryDelayMs ?? anthropicResetMs(headers, now);
  const retry = wait === undefined ? {} : { retryAfterMs: wait };
  const code = described?.code ?? described?.type;
  if (status === 429) return { ...base, ...retry, kind: code === 'insufficient_quota' ? 'quota_exceeded' : 'rate_limit' };
  if (status === 401 || status === 403) return { ...base, kind: 'unauthorized' };
  if (status === 408 || status === 409 || status >= 500) return { ...base, ...retry, kind: 'server' };
  return { ...base, kind: 'client' };
}
