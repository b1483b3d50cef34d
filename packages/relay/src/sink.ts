/**
 * @module sink
 * Where the relay writes a response: an HTTP response in the servers, an
 * in-memory buffer in tests. Nothing goes to the client before `writeHead`,
 * and the relay calls it only once it is sure of the answer, which is what
 * lets it retry on another provider until the first byte.
 */
import type { ServerResponse } from 'node:http';

/** A response being written. */
export interface ResponseSink {
  /** True once headers went out: from then on the relay cannot retry. */
  readonly headersSent: boolean;
  /** True when the client went away. */
  readonly closed: boolean;
  writeHead(status: number, headers: Record<string, string>): void;
  /** Writes a chunk; false means wait for {@link drain} before writing more. */
  write(chunk: Uint8Array | string): boolean;
  /** Resolves when the client can take more data (or has gone). */
  drain(): Promise<void>;
  end(chunk?: Uint8Array | string): void;
}

/**
 * A sink over a node:http `ServerResponse`. SSE chunks are written as they
 * come (node sends each `write` immediately; there is no output buffering to
 * flush), and `drain` waits on the socket, so a slow client slows the
 * upstream read instead of filling memory.
 *
 * @example
 * ```ts
 * http.createServer((req, res) => relay.handle(request, nodeResponseSink(res)));
 * ```
 */
export function nodeResponseSink(res: ServerResponse): ResponseSink {
  return new NodeResponseSink(res);
}

/** A class, not an object literal: one is made per request, and methods on a prototype cost no closures. */
class NodeResponseSink implements ResponseSink {
  constructor(private readonly res: ServerResponse) {}

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  writeHead(status: number, headers: Record<string, string>): void {
    this.res.writeHead(status, headers);
  }

  write(chunk: Uint8Array | string): boolean {
    return this.res.write(chunk);
  }

  drain(): Promise<void> {
    const res = this.res;
    if (!res.writableNeedDrain || res.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }

  end(chunk?: Uint8Array | string): void {
    if (chunk === undefined) this.res.end();
    else this.res.end(chunk);
  }
}

/** A sink that keeps everything in memory (tests, and callers that want the whole answer). */
export class MemorySink implements ResponseSink {
  status = 0;
  headers: Record<string, string> = {};
  readonly chunks: Buffer[] = [];
  ended = false;
  headersSent = false;
  closed = false;

  writeHead(status: number, headers: Record<string, string>): void {
    this.status = status;
    this.headers = headers;
    this.headersSent = true;
  }

  write(chunk: Uint8Array | string): boolean {
    this.chunks.push(Buffer.from(chunk));
    return true;
  }

  async drain(): Promise<void> {}

  end(chunk?: Uint8Array | string): void {
    if (chunk !== undefined) this.chunks.push(Buffer.from(chunk));
    this.ended = true;
  }

  /** Everything written, as text. */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
