/**
 * @module fixtures
 * Test helpers (not published): event builders and a local HTTP receiver
 * that records what it is sent and answers with scripted statuses.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AttemptEndEvent, RequestEndEvent, RequestStartEvent } from '../events.js';

export function requestStart(overrides: Partial<RequestStartEvent> = {}): RequestStartEvent {
  return { requestId: 'req-1', model: 'gpt-4o', ingress: 'openai', stream: false, client: null, at: 0, ...overrides };
}

export function requestEnd(overrides: Partial<RequestEndEvent> = {}): RequestEndEvent {
  return {
    requestId: 'req-1',
    model: 'gpt-4o',
    client: null,
    provider: 'openai',
    credentialId: 'cred-a',
    outcome: 'success',
    httpStatus: 200,
    errorType: null,
    latencyMs: 800,
    ttfbMs: 150,
    tokens: { input: 12, output: 34 },
    cached: false,
    attempts: 1,
    at: 0,
    ...overrides,
  };
}

export function attemptEnd(overrides: Partial<AttemptEndEvent> = {}): AttemptEndEvent {
  return {
    requestId: 'req-1',
    provider: 'openai',
    credentialId: 'cred-a',
    attempt: 1,
    outcome: 'success',
    httpStatus: 200,
    errorType: null,
    latencyMs: 700,
    at: 0,
    ...overrides,
  };
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  json(): unknown;
}

/** A local HTTP server that records requests; `statuses` scripts the answers (then 200 forever). */
export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  statuses: number[];
  close(): Promise<void>;
  /** Resolves once `count` requests arrived (polls; fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
}

export async function startReceiver(
  answer: (req: ReceivedRequest) => { status: number; body?: string } | undefined = () => undefined,
): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const statuses: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const record: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        json: () => JSON.parse(body.toString('utf8')),
      };
      received.push(record);
      const custom = answer(record);
      const status = custom?.status ?? statuses.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(custom?.body ?? (status < 300 ? 'ok' : 'failed'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    statuses,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} requests, got ${received.length}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
}

/** Polls `predicate` every few ms until it holds (fails after `timeoutMs`). */
export async function until(predicate: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
