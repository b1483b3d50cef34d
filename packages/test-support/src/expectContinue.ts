/**
 * @module expectContinue
 * A raw HTTP/1.1 request that announces `Expect: 100-continue`, for tests of
 * what a server answers before the client uploads (fetch cannot send it).
 */
import { request } from 'node:http';

/** What the server answered. */
export interface ContinueOutcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Whether the server sent `100 Continue`. */
  continued: boolean;
}

/** A request announcing `Expect: 100-continue`. */
export interface ContinueRequest {
  method: string;
  /** Declared `Content-Length`; without it the body goes chunked. */
  contentLength?: number;
  headers?: Record<string, string>;
  /** Uploaded only once the server answers 100; without it nothing is ever uploaded. */
  body?: string | Buffer;
  /** Fail when no final answer comes within this long (default 5 s): a server waiting for a body never sent. */
  timeoutMs?: number;
}

/**
 * Sends the request's headers and waits: the body follows only a `100
 * Continue`. Resolves with the final answer and whether a 100 came first.
 *
 * @example
 * ```ts
 * const outcome = await sendExpectingContinue(`${url}/upload`, { method: 'POST', contentLength: 1e9 });
 * assert.deepEqual([outcome.status, outcome.continued], [413, false]);
 * ```
 */
export function sendExpectingContinue(url: string, options: ContinueRequest): Promise<ContinueOutcome> {
  const target = new URL(url);
  const length =
    options.contentLength === undefined ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(options.contentLength) };
  return new Promise((resolve, reject) => {
    let continued = false;
    const timeoutMs = options.timeoutMs ?? 5000;
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms (${continued ? 'after' : 'without'} a 100 Continue)`));
    }, timeoutMs);
    const req = request({
      host: target.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: target.port,
      path: `${target.pathname}${target.search}`,
      method: options.method,
      headers: { ...options.headers, ...length, expect: '100-continue' },
    });
    req.on('continue', () => {
      continued = true;
      if (options.body !== undefined) req.end(options.body);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), continued });
        req.destroy();
      });
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.flushHeaders();
  });
}
