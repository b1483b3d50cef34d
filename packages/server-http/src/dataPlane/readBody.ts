/**
 * @module readBody
 * Reads a request body with a size limit, so a client cannot make the
 * gateway buffer without bound.
 */
import type { IncomingMessage } from 'node:http';
import { readCappedBody } from '@switchyard/runtime';

/** The body exceeded the limit. */
export class BodyTooLarge extends Error {
  override name = 'BodyTooLarge';
}

/**
 * Reads the whole body, refusing more than `limit` bytes (the declared length is checked first; a
 * chunked body over the limit is read to its end and dropped before the refusal: answering while
 * the client is still sending would not reach it, since node:http closes a connection whose request
 * was answered before it was read, and the reset that the unread bytes cause overtakes the 413. Once
 * the rest passes the limit too, the connection is cut instead). The runtime's `readCappedBody`
 * reads it, through `data` events rather than an iterator.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit)
    return Promise.reject(new BodyTooLarge(`request body of ${declared} bytes exceeds the ${limit}-byte limit`));
  return readCappedBody(req, limit, {
    rest: 'drain',
    tooLarge: () => new BodyTooLarge(`request body exceeds the ${limit}-byte limit`),
    // Closed before `end`: the client went away mid-body.
    closedEarly: () => Object.assign(new Error('the client closed the connection before sending the whole body'), { code: 'ECONNRESET' }),
  });
}
