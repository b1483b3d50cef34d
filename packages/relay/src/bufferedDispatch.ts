/**
 * @module bufferedDispatch
 * Sends one request through an undici dispatcher and reads its whole answer
 * into memory, for answers the relay reads whole anyway (non-streamed
 * completions, token counts, error bodies).
 *
 * undici's `request()` wraps every response in a `Readable` stream, an
 * `AsyncResource` and a promise, and the relay then read that stream back
 * into one buffer. This handler keeps the chunks in an array and resolves
 * once, at the end. (Its effect on the relay benchmark's CPU per request is
 * within the spread of process instances: docs/benchmarks.md.)
 *
 * What `request()` did and this keeps: an abort signal that cancels the call
 * (before or after it was sent), 1xx answers skipped, and a bound on the bytes
 * held in memory.
 */
import type { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import type { UpstreamResponse } from './types.js';

/** How much of an answer a buffered send keeps. */
export interface BufferLimits {
  /** Largest body read for a success (2xx, 3xx); a larger one fails the call (`BODY_TOO_LARGE`). */
  maxBytes: number;
  /** Largest error body (4xx, 5xx) kept; a larger one is dropped and the answer resolves with an empty body. */
  maxErrorBytes: number;
}

/** The options {@link dispatchBuffered} sends with (undici's dispatch options, minus what the handler owns). */
export type BufferedDispatchOptions = Dispatcher.DispatchOptions;

function tooLarge(limit: number): Error {
  return Object.assign(new Error(`upstream body exceeds ${limit} bytes`), { code: 'BODY_TOO_LARGE' });
}

/**
 * Response headers as one string per lower-cased name, repeated fields joined with `, ` (as the
 * relay reads them). `__proto__` is skipped: it names no header a provider sends, and assigning
 * it would replace the object's prototype.
 */
export function headersOf(raw: readonly (Buffer | string)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    if (name === '__proto__') continue;
    const value = raw[i + 1]!.toString('latin1');
    const before = out[name];
    out[name] = before === undefined ? value : `${before}, ${value}`;
  }
  return out;
}

/**
 * Dispatches `options` on `dispatcher` and resolves with the whole answer: `body` yields it as one
 * chunk and `bytes` holds it. Rejects with undici's error when the call fails, with the signal's
 * reason (or undici's `RequestAbortedError`) when `signal` aborts it, and with `BODY_TOO_LARGE` past
 * `limits.maxBytes`.
 */
export function dispatchBuffered(
  dispatcher: Dispatcher,
  options: BufferedDispatchOptions,
  limits: BufferLimits,
  signal: (EventEmitter & { aborted: boolean; reason: unknown }) | undefined,
): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let abortCall: ((reason?: Error) => void) | undefined;
    let abortedWith: Error | undefined;
    let status = 0;
    let headers: Record<string, string> = {};
    let chunks: Buffer[] = [];
    let size = 0;
    let limit = limits.maxBytes;
    /** An error body past its bound: dropped, and the call ended. */
    let dropped = false;

    const onAbort = () => {
      abortedWith = (signal!.reason as Error | undefined) ?? abortedError();
      abortCall?.(abortedWith);
    };
    const settle = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      signal?.off('abort', onAbort);
      if (error) {
        reject(error);
        return;
      }
      const bytes = dropped ? Buffer.alloc(0) : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      chunks = [];
      resolve({ status, headers, body: oneChunk(bytes), bytes, cancel: noop });
    };

    if (signal?.aborted) abortedWith = (signal.reason as Error | undefined) ?? abortedError();
    else signal?.on('abort', onAbort);

    const handler: Dispatcher.DispatchHandler = {
      onConnect(abort) {
        abortCall = abort;
        if (abortedWith) abort(abortedWith);
      },
      onHeaders(statusCode, rawHeaders) {
        // 1xx (100 Continue, 103 Early Hints): the answer is still to come.
        if (statusCode < 200) return true;
        status = statusCode;
        headers = headersOf(rawHeaders as unknown as (Buffer | string)[]);
        if (statusCode >= 400) limit = limits.maxErrorBytes;
        return true;
      },
      onData(chunk) {
        size += chunk.length;
        if (size > limit) {
          if (status >= 400) {
            // An error body too large to read is classified without it, as before; the call ends here.
            dropped = true;
            settle(undefined);
          } else settle(tooLarge(limit));
          abortCall?.(tooLarge(limit));
          return false;
        }
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        settle(undefined);
      },
      onError(error) {
        settle(error);
      },
    };
    try {
      dispatcher.dispatch(options, handler);
    } catch (error) {
      settle(error as Error);
    }
  });
}

function abortedError(): Error {
  return Object.assign(new Error('Request aborted'), { name: 'AbortError', code: 'UND_ERR_ABORTED' });
}

function noop(): void {}

/** `bytes` as a body of one chunk, for readers that iterate. */
function oneChunk(bytes: Buffer): AsyncIterable<Uint8Array> {
  return {
    async *[Symbol.asyncIterator]() {
      yield bytes;
    },
  };
}
