/**
 * @module http
 * The outbound HTTP the sign-in and refresh flows use: a one-function
 * client port (so tests and embedders can swap it), a default on undici 7,
 * and helpers that parse JSON answers with zod. Answers are capped in size
 * and time, and no error message ever includes a request or response body,
 * since both carry tokens.
 */
import { readCappedBody } from '@switchyard/runtime';
import { type Dispatcher, request } from 'undici';
import type { z } from 'zod';
import { CredentialsError } from '../errors.js';

/** An outbound request. */
export interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** A response, read whole. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Sends one request; rejects only when no response came (network, timeout, abort). */
export type HttpClient = (request: HttpRequest) => Promise<HttpResponse>;

/** Options of {@link createHttpClient}. */
export interface HttpClientOptions {
  /** An undici dispatcher (an `Agent` pool, a proxy). Default: undici's global dispatcher. */
  dispatcher?: Dispatcher;
  /** Limit for headers, and for silence while the body streams (default 30 s). */
  timeoutMs?: number;
  /** Largest body read (default 1 MiB). */
  maxBodyBytes?: number;
}

/**
 * The default client, on undici.
 *
 * @example
 * ```ts
 * const http = createHttpClient({ timeoutMs: 10_000 });
 * const { status, text } = await http({ method: 'GET', url: 'https://auth.example/.well-known/openid-configuration' });
 * ```
 */
export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const timeout = options.timeoutMs ?? 30_000;
  const maxBytes = options.maxBodyBytes ?? 1024 * 1024;
  return async (req) => {
    const response = await request(req.url, {
      method: req.method,
      headers: req.headers ?? {},
      body: req.body ?? null,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
    });
    const body = await readCappedBody(response.body, maxBytes, {
      tooLarge: () =>
        new CredentialsError('authorization_failed', `the answer of ${describeUrl(req.url)} is larger than ${maxBytes} bytes`),
    });
    return { status: response.statusCode, headers: response.headers, text: body.toString('utf8') };
  };
}

/** Origin and path of a URL, for messages (never its query, which may carry a code). */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return 'the endpoint';
  }
}

/** Sends a request, turning a transport failure into a `CredentialsError` that names the endpoint. */
export async function send(http: HttpClient, req: HttpRequest, code: 'authorization_failed' | 'refresh_failed'): Promise<HttpResponse> {
  try {
    return await http(req);
  } catch (error) {
    if (error instanceof CredentialsError) throw error;
    if (req.signal?.aborted) throw new CredentialsError('aborted', 'cancelled', { cause: error });
    const reason = (error as { code?: string }).code ?? (error as Error).name ?? 'network error';
    throw new CredentialsError(code, `${req.method} ${describeUrl(req.url)} failed: ${reason}`, { cause: error });
  }
}

/** The body of `response` as JSON, or undefined when it is not JSON. */
export function jsonOf(response: HttpResponse): unknown {
  try {
    return JSON.parse(response.text);
  } catch {
    return undefined;
  }
}

/**
 * Validates a JSON answer with `schema`; the error names the endpoint and
 * the fields that failed, never the values.
 */
export function parseAnswer<S extends z.ZodType>(
  schema: S,
  response: HttpResponse,
  what: string,
  code: 'authorization_failed' | 'refresh_failed',
): z.output<S> {
  const result = schema.safeParse(jsonOf(response));
  if (result.success) return result.data;
  const fields = result.error.issues.map((issue) => issue.path.join('.') || '(body)').join(', ');
  throw new CredentialsError(code, `${what}: unexpected answer (HTTP ${response.status}; bad or missing ${fields})`);
}

/** `application/x-www-form-urlencoded` body of `fields`. */
export function formBody(fields: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) params.set(key, value);
  return params.toString();
}
