/**
 * @module cappedBody
 * The one read of a whole body up to a cap, for requests a server buffers
 * and answers a client buffers, so that no peer can make a process hold more
 * than its caller allows. Each caller passes its own cap and its own errors.
 * Node streams (node:http requests, undici bodies) are read through `data`
 * events: an async iterator costs a promise and a queued callback per chunk,
 * more than a small body's whole read.
 */
import { Readable } from 'node:stream';
import { RuntimeError } from './errors.js';

/** Options of {@link readCappedBody}. */
export interface CappedBodyOptions {
  /** The error a body over the cap rejects with (default a {@link RuntimeError} `too_large`). */
  tooLarge?: (cap: number) => Error;
  /**
   * What becomes of the rest of a Node stream over the cap. `destroy` (the default)
   * destroys it at once. `drain` reads and drops the rest before rejecting, cutting
   * it only once that passes `cap` bytes too: a server that answers a client still
   * sending would lose the answer to the reset the unread bytes cause.
   */
  rest?: 'destroy' | 'drain';
  /** The error a Node stream that closes before its end rejects with (default code `ERR_STREAM_PREMATURE_CLOSE`). */
  closedEarly?: () => Error;
}

const defaultTooLarge = (cap: number): Error => new RuntimeError('too_large', `the body is larger than ${cap} bytes`);
const defaultClosedEarly = (): Error => Object.assign(new Error('the body closed before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });

/**
 * Reads all of `body`, at most `cap` bytes (a body of exactly `cap` bytes is read;
 * one byte more is refused).
 *
 * @example
 * ```ts
 * const answer = await request(url);
 * const text = (await readCappedBody(answer.body, 1024 * 1024)).toString('utf8');
 * ```
 */
export function readCappedBody(body: AsyncIterable<Uint8Array>, cap: number, options: CappedBodyOptions = {}): Promise<Buffer> {
  const tooLarge = options.tooLarge ?? defaultTooLarge;
  if (!(body instanceof Readable)) return readIterable(body, cap, tooLarge);
  const closedEarly = options.closedEarly ?? defaultClosedEarly;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
    };
    const onData = (chunk: Uint8Array) => {
      size += chunk.byteLength;
      if (size > cap) {
        stop();
        chunks.length = 0;
        const error = tooLarge(cap);
        if (options.rest === 'drain') discardRest(body, cap, () => reject(error));
        else {
          body.destroy();
          reject(error);
        }
        return;
      }
      chunks.push(toBuffer(chunk));
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    // Closed (destroyed) without an end or an error: the peer went away mid-body.
    const onClose = () => {
      stop();
      reject(closedEarly());
    };
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    body.on('close', onClose);
  });
}

async function readIterable(body: AsyncIterable<Uint8Array>, cap: number, tooLarge: (cap: number) => Error): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > cap) throw tooLarge(cap);
    chunks.push(toBuffer(chunk));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

function toBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** Reads and drops the rest of `body`, destroying it once that passes `allowance` bytes; then calls `done`. */
function discardRest(body: Readable, allowance: number, done: () => void): void {
  let dropped = 0;
  const finish = () => {
    body.off('data', onData);
    body.off('end', finish);
    body.off('error', finish);
    body.off('close', finish);
    done();
  };
  const onData = (chunk: Uint8Array) => {
    dropped += chunk.byteLength;
    if (dropped > allowance) body.destroy();
  };
  body.on('data', onData);
  body.on('end', finish);
  body.on('error', finish);
  body.on('close', finish);
}
