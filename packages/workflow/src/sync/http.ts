/**
 * @module http
 * JSON over HTTP for the sync adapters (undici), and OAuth 2.0 client
 * credentials with a cached token. URLs come from operator configuration;
 * tokens and secrets never appear in errors.
 */
import { type Dispatcher, request } from 'undici';
import { WorkflowError } from '../errors.js';
import { type Clock, systemClock } from '../util/clock.js';
import { blockedAsWorkflowError } from './outbound.js';

/** Sends a JSON request; rejects with `upstream_failed` (or `not_found` for 404) on a non-2xx answer. */
export async function jsonRequest<T>(
  method: string,
  url: URL,
  options: {
    headers?: Record<string, string>;
    body?: unknown;
    form?: Record<string, string>;
    signal?: AbortSignal;
    timeoutMs?: number;
    /** The guarded dispatcher (see `outbound.ts`); default the global one. */
    dispatcher?: Dispatcher;
  } = {},
): Promise<{ status: number; body: T }> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: string | undefined;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let status: number;
  let text: string;
  try {
    const response = await request(url, {
      method: method as 'GET',
      headers,
      signal,
      ...(body !== undefined ? { body } : {}),
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    status = response.statusCode;
    text = await response.body.text();
  } catch (error) {
    const blocked = blockedAsWorkflowError(error);
    if (blocked) throw blocked;
    throw new WorkflowError(
      timeout.aborted ? 'timeout' : 'upstream_failed',
      `${method} ${url.origin}${url.pathname}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (status === 404) throw new WorkflowError('not_found', `${method} ${url.pathname}: 404`, { details: { status } });
  if (status < 200 || status >= 300)
    throw new WorkflowError('upstream_failed', `${method} ${url.pathname} answered ${status}: ${text.slice(0, 300)}`, {
      details: { status },
    });
  try {
    return { status, body: (text ? JSON.parse(text) : undefined) as T };
  } catch (error) {
    throw new WorkflowError('upstream_failed', `${method} ${url.pathname}: the answer is not JSON`, { cause: error });
  }
}

/** OAuth 2.0 client credentials (RFC 6749 section 4.4). */
export interface OAuthClientCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  /** Further form fields of the token request (Plane's `app_installation_id`). */
  extraParams?: Record<string, string>;
}

/**
 * Fetches and caches an access token until shortly before it expires.
 *
 * @example
 * ```ts
 * const tokens = new OAuthTokenSource({ tokenUrl: 'https://tracker.example/oauth/token', clientId, clientSecret });
 * const token = await tokens.token();
 * ```
 */
export class OAuthTokenSource {
  private cached: { token: string; expiresAt: number } | undefined;

  constructor(
    private readonly credentials: OAuthClientCredentials,
    private readonly clock: Clock = systemClock,
    private readonly dispatcher?: Dispatcher,
  ) {}

  /** A valid token, fetching a new one when the cached one is (nearly) expired or `refresh` is set. */
  async token(refresh = false): Promise<string> {
    if (!refresh && this.cached && this.cached.expiresAt > this.clock.now()) return this.cached.token;
    const basic = Buffer.from(
      `${encodeURIComponent(this.credentials.clientId)}:${encodeURIComponent(this.credentials.clientSecret)}`,
    ).toString('base64');
    const { body } = await jsonRequest<{ access_token?: unknown; expires_in?: unknown; token_type?: unknown }>(
      'POST',
      new URL(this.credentials.tokenUrl),
      {
        headers: { authorization: `Basic ${basic}` },
        form: {
          grant_type: 'client_credentials',
          ...(this.credentials.scope ? { scope: this.credentials.scope } : {}),
          ...this.credentials.extraParams,
        },
        ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
      },
    );
    if (typeof body?.access_token !== 'string' || body.access_token === '')
      throw new WorkflowError('upstream_failed', 'the token endpoint answered without an access_token');
    const lifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : 3_600_000;
    // Refresh 30 s early so a token never expires in flight.
    this.cached = { token: body.access_token, expiresAt: this.clock.now() + Math.max(0, lifetime - 30_000) };
    return body.access_token;
  }
}
