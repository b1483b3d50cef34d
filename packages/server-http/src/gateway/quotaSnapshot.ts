/**
 * @module quotaSnapshot
 * A code-assistant credential's quota, for `/v0/management/provider-a-quota`:
 * from the provider's own quota endpoint when `providers.<p>.options.quota_url`
 * names one, else from the local quota tracker. The endpoint is called with
 * the credential's token as a bearer token, through the same SSRF guard as
 * `/api-call` (`remote-management.api-call-allow` lets private or loopback
 * hosts through), with a timeout, a size cap and no redirects. When the call
 * fails, the snapshot falls back to the local figures and says why in `error`.
 */
import { readCappedBody } from '@switchyard/runtime';
import { request } from 'undici';
import { assertCallableUrl, guardedAgent, type LookupFunction, SsrfBlocked, type SsrfPolicy } from '../controlPlane/ssrf.js';

const TIMEOUT_MS = 15_000;
const MAX_BODY_BYTES = 256 * 1024;

/** Quota figures: tokens or requests, whichever the source counts. */
export interface QuotaFigures {
  limit: number | null;
  used: number | null;
  remaining: number | null;
  resets_at: string | null;
}

/** One credential's quota snapshot. */
export interface QuotaSnapshot extends QuotaFigures {
  auth_index: number;
  id: string;
  provider: string;
  source: 'provider' | 'local';
  fetched_at: string;
  /** Why the provider's figures are missing (the local ones are given instead). */
  error?: string;
}

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads a quota endpoint's answer: either the generic shape
 * `{limit, used, remaining, resets_at}`, or a coding assistant's
 * `{quota_snapshots: {premium_interactions | chat: {entitlement, remaining}}, quota_reset_date}`.
 * Undefined when it is neither.
 *
 * @example
 * ```ts
 * parseQuotaAnswer({ limit: 300, used: 12, remaining: 288, resets_at: '2026-12-01T00:00:00Z' });
 * ```
 */
export function parseQuotaAnswer(body: unknown): QuotaFigures | undefined {
  if (!isObject(body)) return undefined;
  const resets = text(body.resets_at) ?? text(body.quota_reset_date_utc) ?? text(body.quota_reset_date);
  if (num(body.limit) !== null || num(body.remaining) !== null) {
    const limit = num(body.limit);
    const remaining = num(body.remaining);
    const used = num(body.used) ?? (limit !== null && remaining !== null ? limit - remaining : null);
    return { limit, used, remaining: remaining ?? (limit !== null && used !== null ? limit - used : null), resets_at: resets };
  }
  const snapshots = isObject(body.quota_snapshots) ? body.quota_snapshots : undefined;
  const entry = snapshots && ([snapshots.premium_interactions, snapshots.chat].find(isObject) as Record<string, unknown> | undefined);
  if (!entry) return undefined;
  if (entry.unlimited === true) return { limit: null, used: null, remaining: null, resets_at: resets };
  const limit = num(entry.entitlement);
  const remaining = num(entry.remaining);
  return { limit, used: limit !== null && remaining !== null ? limit - remaining : null, remaining, resets_at: resets };
}

/**
 * Calls a quota endpoint with `token`; throws an Error whose message is safe to show (never the token).
 * Every connection is vetted, whoever set `url`: `resolve` is the gateway's resolver, which the guard wraps.
 */
export async function fetchProviderQuota(url: string, token: string, policy: SsrfPolicy, resolve?: LookupFunction): Promise<QuotaFigures> {
  let target: URL;
  try {
    target = assertCallableUrl(url, policy);
  } catch (error) {
    throw new Error(refusal(error));
  }
  const dispatcher = guardedAgent(policy, resolve);
  try {
    const answer = await request(target, {
      method: 'GET',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      dispatcher,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const raw = await readCappedBody(answer.body, MAX_BODY_BYTES, {
      tooLarge: () => new Error(`the quota endpoint answered more than ${MAX_BODY_BYTES} bytes`),
    });
    if (answer.statusCode >= 300 && answer.statusCode < 400)
      throw new Error(`the quota endpoint redirected (${answer.statusCode}); redirects are not followed`);
    if (answer.statusCode >= 400) throw new Error(`the quota endpoint answered ${answer.statusCode}`);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new Error('the quota endpoint did not answer JSON');
    }
    const figures = parseQuotaAnswer(body);
    if (!figures) throw new Error('the quota endpoint answered JSON without quota figures');
    return figures;
  } catch (error) {
    // undici passes the lookup's refusal on as is, or as the cause of its own error.
    const cause = (error as { cause?: unknown }).cause;
    if (error instanceof SsrfBlocked || cause instanceof SsrfBlocked)
      throw new Error(refusal(error instanceof SsrfBlocked ? error : cause));
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'HeadersTimeoutError' || name === 'BodyTimeoutError') {
      throw new Error(`no answer from the quota endpoint within ${TIMEOUT_MS / 1000} s`);
    }
    throw new Error(
      String((error as Error).message)
        .split(token)
        .join('***'),
    );
  } finally {
    await dispatcher.close();
  }
}

function refusal(error: unknown): string {
  if (error instanceof SsrfBlocked) {
    return `quota_url refused: ${error.host} is in the ${error.range} range (allow it in remote-management.api-call-allow)`;
  }
  return `quota_url refused: ${(error as Error).message}`;
}
