/**
 * @module fakeUpstream
 * The engine behind the fake upstreams (OpenAI, Anthropic, Gemini): a
 * node:http server on 127.0.0.1 port 0 that records every request, answers
 * in one API family's documented shapes through a {@link FakeDialect}, and
 * can be scripted to fail the ways real upstreams do: a status (429 with
 * Retry-After, 5xx), a reset connection, a hang, a stream cut off mid-event.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the fake does for one request. */
export type FakeBehaviour =
  | { type: 'ok'; content?: string; chunks?: number; chunkDelayMs?: number }
  | { type: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Destroys the connection before sending anything. */
  | { type: 'reset' }
  /** Never answers (for timeouts). */
  | { type: 'hang' }
  /** Streams `afterChunks` content chunks, then destroys the connection mid-event. */
  | { type: 'cut'; afterChunks: number };

/** A request the fake received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  /** The query string, without `?` (empty when none). */
  query: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | undefined;
}

/** Token counts every fake reports, so tests can check they survive translation. */
export const FAKE_USAGE = { input: 11, output: 7 } as const;

/** The arguments of every fake tool call. */
export const FAKE_TOOL_ARGUMENTS = '{"location":"Paris"}';

/** What the dialect makes of a request's route. */
export type FakeRoute =
  | { kind: 'generate'; stream: boolean; model: string }
  | { kind: 'count'; model: string }
  | { kind: 'models' }
  | { kind: 'model'; id: string };

/** One API family's side of a fake. */
export interface FakeDialect {
  route(method: string, path: string, query: string, body: Record<string, unknown> | undefined): FakeRoute | undefined;
  /** The text the fake echoes back (`Echo: <last user text>`). */
  lastUserText(body: Record<string, unknown>): string;
  /** The first declared tool's name, when the request declares tools. */
  toolName(body: Record<string, unknown>): string | undefined;
  complete(model: string, content: string, tool: string | undefined, body: Record<string, unknown>): unknown;
  /** The stream's events as whole SSE texts; `parts` are the content chunks (cuts happen between them). */
  stream(
    model: string,
    parts: string[],
    tool: string | undefined,
    body: Record<string, unknown>,
  ): { head: StreamPiece[]; parts: StreamPiece[]; tail: StreamPiece[] };
  /** Content type of a stream (default `text/event-stream`). */
  streamContentType?: string;
  models(ids: readonly string[]): unknown;
  count(body: Record<string, unknown>): unknown;
  error(status: number, message: string): unknown;
}

/** One whole event of a stream. */
export type StreamPiece = string | Buffer;

/** Options of a fake upstream. */
export interface FakeUpstreamOptions {
  /** Decides each generate request; `n` counts generate requests from 1. Default: always `{ type: 'ok' }`. */
  behaviour?: (request: ReceivedRequest, n: number) => FakeBehaviour;
  /** Model ids for the model list. */
  models?: string[];
  /** Prefix of the API paths (default `/v1`, Gemini `/v1beta`). */
  prefix?: string;
}

/** A running fake upstream. */
export interface FakeUpstream {
  /** Base URL including the prefix, e.g. `http://127.0.0.1:43121/v1`. */
  url: string;
  requests: ReceivedRequest[];
  /** Generate requests answered so far. */
  readonly chatCount: number;
  setBehaviour(behaviour: FakeUpstreamOptions['behaviour']): void;
  close(): Promise<void>;
}

function splitInto(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

async function stream(
  res: ServerResponse,
  dialect: FakeDialect,
  route: { model: string },
  body: Record<string, unknown>,
  content: string,
  plan: FakeBehaviour,
) {
  res.writeHead(200, { 'content-type': dialect.streamContentType ?? 'text/event-stream', 'cache-control': 'no-cache' });
  const chunks = plan.type === 'ok' && plan.chunks ? splitInto(content, plan.chunks) : content.split(/(?<= )/);
  const events = dialect.stream(route.model, chunks, dialect.toolName(body), body);
  for (const event of events.head) res.write(event);
  let sent = 0;
  for (const event of events.parts) {
    if (plan.type === 'cut' && sent >= plan.afterChunks) {
      // Let the whole events reach the other side first, as they would over a real network.
      if (sent > 0) await new Promise((r) => setTimeout(r, 50));
      // Half an event, then the connection dies: the relay must not forward half an event.
      const half = Math.max(1, Math.floor(event.length / 2));
      res.write(typeof event === 'string' ? event.slice(0, half) : event.subarray(0, half));
      res.socket?.destroy();
      return;
    }
    if (plan.type === 'ok' && plan.chunkDelayMs) await new Promise((r) => setTimeout(r, plan.chunkDelayMs));
    res.write(event);
    sent++;
  }
  for (const event of events.tail.slice(0, -1)) res.write(event);
  res.end(events.tail.at(-1) ?? '');
}

/**
 * Starts a fake upstream speaking `dialect`.
 *
 * @example
 * ```ts
 * const upstream = await startFakeUpstream(anthropicDialect, { behaviour: (_req, n) => (n === 1 ? { type: 'status', status: 529 } : { type: 'ok' }) });
 * await upstream.close();
 * ```
 */
export async function startFakeUpstream(dialect: FakeDialect, options: FakeUpstreamOptions & { prefix: string }): Promise<FakeUpstream> {
  let behaviour = options.behaviour ?? (() => ({ type: 'ok' }) as FakeBehaviour);
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  let chatCount = 0;
  const json = (res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(payload));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> | undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const [rawPath, query = ''] = (req.url ?? '/').split('?', 2) as [string, string?];
    const received: ReceivedRequest = { method: req.method ?? 'GET', path: rawPath, query, headers: req.headers, body };
    requests.push(received);
    const route = rawPath.startsWith(options.prefix)
      ? dialect.route(req.method ?? 'GET', rawPath.slice(options.prefix.length), query, body)
      : undefined;
    if (!route) return json(res, 404, dialect.error(404, `no route for ${req.method} ${rawPath}`));
    if (route.kind === 'models') return json(res, 200, dialect.models(options.models ?? []));
    if (route.kind === 'model')
      return json(res, 200, (dialect.models([route.id]) as { data?: unknown[]; models?: unknown[] }).data?.[0] ?? {});
    if (!body) return json(res, 400, dialect.error(400, 'the body must be JSON'));
    if (route.kind === 'count') return json(res, 200, dialect.count(body));
    chatCount++;
    const plan = behaviour(received, chatCount);
    const content = plan.type === 'ok' && plan.content ? plan.content : `Echo: ${dialect.lastUserText(body)}`;
    switch (plan.type) {
      case 'reset':
        req.socket.destroy();
        return;
      case 'hang':
        return;
      case 'status':
        return json(res, plan.status, plan.body ?? dialect.error(plan.status, `fake upstream says ${plan.status}`), plan.headers);
      default:
        if (route.stream) return stream(res, dialect, route, body, content, plan);
        return json(res, 200, dialect.complete(route.model, content, dialect.toolName(body), body));
    }
  };
  const server: Server = createServer((req, res) => {
    // A body the dialect cannot make sense of (fuzzing sends many) is a 400, as a real upstream's would be, never a hang.
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return void res.destroy();
      json(res, 400, dialect.error(400, `the fake upstream cannot read this request: ${(error as Error).message}`));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${options.prefix}`,
    requests,
    get chatCount() {
      return chatCount;
    },
    setBehaviour(next) {
      behaviour = next ?? (() => ({ type: 'ok' }));
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
