/**
 * @module httpPost
 * One JSON POST for the webhook and pager notifiers, over undici, with the
 * retry classification they share: network errors, 408, 429 and 5xx may
 * pass on a later try; any other non-2xx will not. Errors name the channel
 * and status, never the URL (a chat webhook URL is itself a secret).
 */
import { type Dispatcher, request } from 'undici';
import { NotificationFailed } from '../errors.js';

/** Options of {@link postJson}. */
export interface PostJsonOptions {
  channel: string;
  url: string;
  body: unknown;
  signal: AbortSignal;
  headers?: Record<string, string>;
  /** undici dispatcher (an Agent with its own pool or a proxy). */
  dispatcher?: Dispatcher;
}

/**
 * POSTs `body` as JSON; resolves with the response text on 2xx.
 *
 * @throws {NotificationFailed} with `retryable` set by the rule above.
 * @example
 * ```ts
 * await postJson({ channel: 'chat', url, body: { text: 'hi' }, signal: AbortSignal.timeout(10_000) });
 * ```
 */
export async function postJson(options: PostJsonOptions): Promise<string> {
  let response: Dispatcher.ResponseData;
  try {
    response = await request(options.url, {
      method: 'POST',
      body: JSON.stringify(options.body),
      headers: { 'content-type': 'application/json', 'user-agent': 'switchyard-observability', ...options.headers },
      signal: options.signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
  } catch (error) {
    const reason = options.signal.aborted ? 'timed out' : `request failed (${(error as NodeJS.ErrnoException).code ?? 'network error'})`;
    throw new NotificationFailed(options.channel, reason, { retryable: true, cause: error });
  }
  const text = await response.body.text().catch(() => '');
  const status = response.statusCode;
  if (status >= 200 && status < 300) return text;
  const retryable = status === 408 || status === 429 || status >= 500;
  throw new NotificationFailed(options.channel, `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`, { retryable, status });
}
