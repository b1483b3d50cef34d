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
 * Reads the whole body, refusing more than `limit` bytes (the declared length is checked first).
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
        // Stop reading, as leaving a `for await` loop did.
        req.destroy();
        reject(new BodyTooLarge(`request body exceeds the ${limit}-byte limit`));
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
