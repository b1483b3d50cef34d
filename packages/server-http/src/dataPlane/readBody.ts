/**
 * @module readBody
 * Reads a request body with a size limit, so a client cannot make the
 * gateway buffer without bound.
 */
import type { IncomingMessage } from 'node:http';

/** The body exceeded the limit. */
export class BodyTooLarge extends Error {
  override name = 'BodyTooLarge';
}

/**
 * Reads and drops the rest of a body that went over its cap (one sent chunked, with no length to
 * refuse it by), then calls `done` to have the 413 sent. Answering while the client is still
 * sending would not reach it: node:http closes a connection whose request was answered before it
 * was read, and the reset that the unread bytes cause overtakes the 413. Once the rest passes
 * `allowance` too, the connection is cut instead (the client sees its upload fail).
 */
function discardRest(req: IncomingMessage, allowance: number, done: () => void): void {
  let dropped = 0;
  const finish = () => {
    req.off('data', onData);
    req.off('end', finish);
    req.off('error', finish);
    req.off('close', finish);
    done();
  };
  const onData = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > allowance) req.destroy();
  };
  req.on('data', onData);
  req.on('end', finish);
  req.on('error', finish);
  req.on('close', finish);
}

/**
 * Reads the whole body, refusing more than `limit` bytes (the declared length is checked first; a
 * chunked body over the limit is read to its end, dropped, before the refusal, as `discardRest` says).
 * Listens for `data` events rather than iterating: an async iterator over a request costs more
 * than a small body's whole read.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit)
    return Promise.reject(new BodyTooLarge(`request body of ${declared} bytes exceeds the ${limit}-byte limit`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        const tooLarge = new BodyTooLarge(`request body exceeds the ${limit}-byte limit`);
        discardRest(req, limit, () => reject(tooLarge));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      // Closed before `end`: the client went away mid-body.
      cleanup();
      reject(Object.assign(new Error('the client closed the connection before sending the whole body'), { code: 'ECONNRESET' }));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
