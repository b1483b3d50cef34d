/**
 * @module bodyCap
 * A request-body size cap for Hono routes on node:http that leaves refused
 * bodies drainable.
 *
 * hono's `bodyLimit` touches `c.req.raw.body` on every request it sees, which
 * turns node's request into a web stream. A body that stream holds and nobody
 * reads (a 415 or 413 answered before the route reads it) can no longer be
 * drained by node after the answer, so the connection is cut: a keep-alive
 * client loses it, and one still uploading may get a reset instead of the
 * answer. So a body of declared length is judged by its `Content-Length`
 * alone and left untouched (node reads and discards what is refused); only a
 * chunked body, whose size is unknown until read, goes through `bodyLimit`.
 */
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from './apiError.js';

/**
 * Refuses bodies larger than `maxSize` bytes with `payload_too_large`.
 *
 * @example
 * ```ts
 * app.use('/message', bodyCap(1024 * 1024, 'the request body must be at most 1048576 bytes'));
 * ```
 */
export function bodyCap(maxSize: number, message: string): MiddlewareHandler {
  const readChunkedUpToLimit = bodyLimit({
    maxSize,
    onError: () => {
      // The rest of a chunked body stays unread, so the connection cannot carry another request.
      throw new ApiError('payload_too_large', message, { headers: { connection: 'close' } });
    },
  });
  return async (c, next) => {
    if (c.req.header('transfer-encoding') !== undefined) return readChunkedUpToLimit(c, next);
    if (Number(c.req.header('content-length') ?? 0) > maxSize) throw new ApiError('payload_too_large', message);
    return next();
  };
}
