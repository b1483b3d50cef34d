/**
 * @module requestId
 * The request id: taken from the client's `X-Request-Id` when it is a
 * sane token, else a fresh UUID, and echoed on the response so a client can
 * quote it. Ids are checked because they go into log lines: a client must
 * not be able to inject newlines or megabytes into the logs.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';

/** The header name, lower-case as node:http presents it. */
export const REQUEST_ID_HEADER = 'x-request-id';

const ACCEPTABLE = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * The id to use for a request: the incoming `X-Request-Id` if it is 1–128
 * characters of `[A-Za-z0-9._:@/+=-]`, otherwise a new UUID.
 *
 * @example
 * ```ts
 * requestIdFrom({ 'x-request-id': 'abc-123' }); // 'abc-123'
 * requestIdFrom({});                             // '3b241101-e2bb-4255-8caf-4136c566a962'
 * ```
 */
export function requestIdFrom(headers: IncomingHttpHeaders | Headers, generate: () => string = randomUUID): string {
  const raw = headers instanceof Headers ? headers.get(REQUEST_ID_HEADER) : headers[REQUEST_ID_HEADER];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value !== undefined && value !== null && ACCEPTABLE.test(value) ? value : generate();
}

/**
 * Resolves the request id and sets it on the response as `X-Request-Id`.
 *
 * @example
 * ```ts
 * createServer((req, res) => {
 *   const requestId = ensureRequestId(req, res);
 *   logger.info({ request_id: requestId }, 'received');
 * });
 * ```
 */
export function ensureRequestId(
  req: { headers: IncomingHttpHeaders },
  res: Pick<ServerResponse, 'setHeader' | 'headersSent'>,
  generate?: () => string,
): string {
  const id = requestIdFrom(req.headers, generate);
  if (!res.headersSent) res.setHeader('X-Request-Id', id);
  return id;
}
