/**
 * @module fakeOpenAi
 * A local stand-in for an OpenAI-compatible upstream, on 127.0.0.1 port 0,
 * for tests and examples. It answers chat completions (plain, streamed, with
 * tool calls) in OpenAI's documented shapes, and can be scripted to fail in
 * every way a real upstream does: a status (429 with Retry-After, 5xx), a
 * reset connection, a hang, a stream cut off mid-way.
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
  /** Streams `afterChunks` content chunks, then destroys the connection. */
  | { type: 'cut'; afterChunks: number };

/** A request the fake received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | undefined;
}

/** Options of {@link startFakeOpenAi}. */
export interface FakeOpenAiOptions {
  /** Decides each chat request; `n` counts chat requests from 1. Default: always `{ type: 'ok' }`. */
  behaviour?: (request: ReceivedRequest, n: number) => FakeBehaviour;
  /** Model ids for `GET /v1/models`. */
  models?: string[];
  /** Prefix of the API paths (default `/v1`). */
  prefix?: string;
}

/** A running fake upstream. */
export interface FakeOpenAi {
  /** Base URL including the prefix, e.g. `http://127.0.0.1:43121/v1`. */
  url: string;
  requests: ReceivedRequest[];
  /** Chat requests answered so far. */
  readonly chatCount: number;
  setBehaviour(behaviour: FakeOpenAiOptions['behaviour']): void;
  close(): Promise<void>;
}

const now = () => Math.floor(Date.now() / 1000);

function lastUserText(body: Record<string, unknown> | undefined): string {
  const messages = Array.isArray(body?.messages) ? (body.messages as { role?: string; content?: unknown }[]) : [];
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : '';
}

function toolCall(body: Record<string, unknown>) {
  const tools = body.tools as { function?: { name?: string } }[];
  return { id: 'call_fake_1', type: 'function', function: { name: tools[0]?.function?.name ?? 'tool', arguments: '{"location":"Paris"}' } };
}

function completion(body: Record<string, unknown>, content: string) {
  const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
  const wantsTool = Array.isArray(body.tools) && body.tools.length > 0;
  const message = wantsTool ? { role: 'assistant', content: null, tool_calls: [toolCall(body)] } : { role: 'assistant', content };
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: now(),
    model: body.model,
    choices: [{ index: 0, message, finish_reason: wantsTool ? 'tool_calls' : 'stop', logprobs: null }],
    usage,
  };
}

async function stream(res: ServerResponse, body: Record<string, unknown>, content: string, behaviour: FakeBehaviour): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: now(), model: body.model };
  const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  const wantsTool = Array.isArray(body.tools) && body.tools.length > 0;
  send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  const parts = behaviour.type === 'ok' && behaviour.chunks ? splitInto(content, behaviour.chunks) : content.split(/(?<= )/);
  let sent = 0;
  if (wantsTool) {
    const call = toolCall(body);
    send({
      ...base,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] },
          finish_reason: null,
        },
      ],
    });
    send({
      ...base,
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] }, finish_reason: null }],
    });
  } else {
    for (const part of parts) {
      if (behaviour.type === 'cut' && sent >= behaviour.afterChunks) {
        // Let the whole events reach the other side first, as they would over a real network.
        if (sent > 0) await new Promise((r) => setTimeout(r, 50));
        // A partial event, then the connection dies: the relay must not forward half an event.
        res.write('data: {"id":"chatcmpl-fake","choi');
        res.socket?.destroy();
        return;
      }
      if (behaviour.type === 'ok' && behaviour.chunkDelayMs) await new Promise((r) => setTimeout(r, behaviour.chunkDelayMs));
      send({ ...base, choices: [{ index: 0, delta: { content: part }, finish_reason: null }] });
      sent++;
    }
  }
  send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: wantsTool ? 'tool_calls' : 'stop' }] });
  const options = body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage) send({ ...base, choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
  res.end('data: [DONE]\n\n');
}

function splitInto(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * Starts a fake OpenAI-compatible upstream.
 *
 * @example
 * ```ts
 * const upstream = await startFakeOpenAi({ behaviour: (_req, n) => (n % 2 ? { type: 'status', status: 429 } : { type: 'ok' }) });
 * // providers: [{ name: 'fake', kind: 'openai-compatible', baseUrl: upstream.url, models: ['gpt-4o'] }]
 * await upstream.close();
 * ```
 */
export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
  let behaviour = options.behaviour ?? (() => ({ type: 'ok' }) as FakeBehaviour);
  const prefix = options.prefix ?? '/v1';
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  let chatCount = 0;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> | undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const path = (req.url ?? '/').split('?')[0]!;
    const received: ReceivedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body };
    requests.push(received);
    if (req.method === 'GET' && path === `${prefix}/models`) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: (options.models ?? []).map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })),
        }),
      );
      return;
    }
    if (req.method !== 'POST' || path !== `${prefix}/chat/completions` || !body) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error', code: null } }));
      return;
    }
    chatCount++;
    const plan = behaviour(received, chatCount);
    const content = `Echo: ${lastUserText(body)}`;
    switch (plan.type) {
      case 'reset':
        req.socket.destroy();
        return;
      case 'hang':
        return;
      case 'status':
        res.writeHead(plan.status, { 'content-type': 'application/json', ...plan.headers });
        res.end(JSON.stringify(plan.body ?? { error: { message: `fake upstream says ${plan.status}`, type: 'error', code: null } }));
        return;
      default:
        if (body.stream === true) return stream(res, body, plan.type === 'ok' && plan.content ? plan.content : content, plan);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(body, plan.type === 'ok' && plan.content ? plan.content : content)));
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
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
