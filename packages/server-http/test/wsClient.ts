/**
 * @module wsClient
 * Test helpers for the websocket routes (not exported by the package): a
 * `ws` client that queues incoming messages so a test can await the next
 * one, or the next one matching a predicate, with a deadline; and an
 * upgrade attempt that reports a refusal's status, headers and body.
 */
import { WebSocket } from 'ws';

// biome-ignore lint/suspicious/noExplicitAny: messages are probed field by field
export type Message = Record<string, any>;

/** A connected client. */
export interface TestSocket {
  ws: WebSocket;
  /** Every message received so far, in order. */
  received: Message[];
  send(message: unknown): void;
  /** The next message (after the ones already taken) matching `match`, within `timeoutMs`. */
  next(match?: (message: Message) => boolean, timeoutMs?: number): Promise<Message>;
  /** Messages up to and including the first that matches `last`. */
  until(last: (message: Message) => boolean, timeoutMs?: number): Promise<Message[]>;
  /** Resolves with the close code once the socket is closed. */
  closed: Promise<number>;
}

/** A refused upgrade. */
export interface Refusal {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Opens a websocket to `url`; resolves with the client, or with the HTTP answer of a refused upgrade. */
export function connect(
  url: string,
  headers: Record<string, string> = {},
  options: { autoPong?: boolean } = {},
): Promise<TestSocket | Refusal> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, ...options });
    const received: Message[] = [];
    let taken = 0;
    const waiters: (() => void)[] = [];
    const closed = new Promise<number>((done) => ws.once('close', (code) => done(code)));
    ws.on('message', (data) => {
      received.push(JSON.parse(data.toString()) as Message);
      for (const wake of waiters.splice(0)) wake();
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    ws.once('error', (error) => {
      if (ws.readyState !== WebSocket.OPEN) reject(error);
    });
    const next = async (match: (message: Message) => boolean = () => true, timeoutMs = 5000): Promise<Message> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        while (taken < received.length) {
          const message = received[taken++]!;
          if (match(message)) return message;
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(received.slice(-5))}`);
        await new Promise<void>((wake) => {
          const timer = setTimeout(wake, remaining);
          waiters.push(() => {
            clearTimeout(timer);
            wake();
          });
        });
      }
    };
    ws.once('open', () =>
      resolve({
        ws,
        received,
        closed,
        send: (message) => ws.send(typeof message === 'string' ? message : JSON.stringify(message)),
        next,
        async until(last, timeoutMs = 5000) {
          const start = taken;
          await next(last, timeoutMs);
          return received.slice(start, taken);
        },
      }),
    );
  });
}

/** A connection that must succeed. */
export async function open(url: string, headers: Record<string, string> = {}, options: { autoPong?: boolean } = {}): Promise<TestSocket> {
  const result = await connect(url, headers, options);
  if ('status' in result) throw new Error(`upgrade refused with ${result.status}: ${result.body}`);
  return result;
}

/** A connection that must be refused. */
export async function refused(url: string, headers: Record<string, string> = {}): Promise<Refusal> {
  const result = await connect(url, headers);
  if (!('status' in result)) {
    result.ws.terminate();
    throw new Error('the upgrade was accepted');
  }
  return result;
}

/** Waits for `condition` to hold, polling, within `timeoutMs`. */
export async function eventually(condition: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
