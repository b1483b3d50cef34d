/**
 * @module scriptedModel
 * The model behind the real coding-agent CLIs in these tests: an OpenAI
 * chat-completions server on loopback (the gateway translates every CLI's
 * own API family to it). It answers with text, or with a call to one of the
 * tools the CLI offers when the test asks for one, and it holds a turn's
 * answer until the test releases it, so a test sees the agent working for as
 * long as it wants without sleeping.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

type Json = Record<string, unknown>;

/** What the model answers to one request. */
export type ModelAnswer = { text: string } | { tool: string; args: Json };

/** A request the model received, with the text of its last user turn. */
export interface ModelRequest {
  body: Json;
  /** The text of the last `user` message (tool results are not user text). */
  lastUserText: string;
  /** The names of the tools offered. */
  tools: string[];
  /** Whether the request carries a tool's result after the last user text. */
  hasToolResult: boolean;
}

/** A turn held until the test releases it. */
export interface HeldTurn {
  request: ModelRequest;
  release(): void;
}

export interface ScriptedModel {
  /** `http://127.0.0.1:<port>/v1`. */
  url: string;
  requests: ModelRequest[];
  /**
   * Holds the next agent turn (a request offering tools) whose last user text contains `marker`,
   * answered with the script's answer once released. Resolves when that request arrives.
   */
  holdNext(marker: string): Promise<HeldTurn>;
  close(): Promise<void>;
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: { type?: string; text?: string }) => (part?.type === 'text' ? (part.text ?? '') : '')).join('\n')
      : '';

function readRequest(body: Json): ModelRequest {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Json[];
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  const tools = ((body.tools ?? []) as Json[]).map((t) => String((t.function as Json | undefined)?.name ?? ''));
  return {
    body,
    lastUserText: lastUser >= 0 ? textOf(messages[lastUser]!.content) : '',
    tools,
    hasToolResult: messages.slice(lastUser + 1).some((m) => m.role === 'tool'),
  };
}

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;

function chunks(model: string, answer: ModelAnswer, usage: boolean): string[] {
  const base = { id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 1, model };
  const chunk = (delta: Json, finish: string | null = null) => sse({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const out = [chunk({ role: 'assistant', content: '' })];
  if ('tool' in answer) {
    out.push(
      chunk({ tool_calls: [{ index: 0, id: 'call_scripted_1', type: 'function', function: { name: answer.tool, arguments: '' } }] }),
    );
    out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(answer.args) } }] }));
    out.push(chunk({}, 'tool_calls'));
  } else {
    for (const piece of answer.text.split(/(?<= )/u)) out.push(chunk({ content: piece }));
    out.push(chunk({}, 'stop'));
  }
  if (usage) out.push(sse({ ...base, choices: [], usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } }));
  out.push('data: [DONE]\n\n');
  return out;
}

function completion(model: string, answer: ModelAnswer): Json {
  const message =
    'tool' in answer
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_scripted_1', type: 'function', function: { name: answer.tool, arguments: JSON.stringify(answer.args) } },
          ],
        }
      : { role: 'assistant', content: answer.text };
  return {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message, finish_reason: 'tool' in answer ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
  };
}

/**
 * Starts the scripted model. `script` decides each answer from the request.
 *
 * @example
 * ```ts
 * const model = await startScriptedModel((request) => ({ text: `You said ${request.lastUserText.length} characters.` }));
 * ```
 */
export async function startScriptedModel(script: (request: ModelRequest) => ModelAnswer): Promise<ScriptedModel> {
  const requests: ModelRequest[] = [];
  const holds: { marker: string; arrived: (turn: HeldTurn) => void }[] = [];
  const sockets = new Set<Socket>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ object: 'list', data: [] }));
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { message: `no route for ${req.method} ${path}` } }));
    }
    const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as Json;
    const request = readRequest(body);
    requests.push(request);
    const model = String(body.model ?? 'scripted');
    const answer = script(request);
    // Only the agent's own turn (it offers tools), never a side request such as a title or a topic.
    const hold = request.hasToolResult || request.tools.length === 0 ? -1 : holds.findIndex((h) => request.lastUserText.includes(h.marker));
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const events = chunks(model, answer, Boolean((body.stream_options as Json | undefined)?.include_usage));
      res.write(events[0]);
      if (hold >= 0) {
        const { arrived } = holds.splice(hold, 1)[0]!;
        await new Promise<void>((release) => arrived({ request, release }));
      }
      for (const event of events.slice(1)) res.write(event);
      return void res.end();
    }
    if (hold >= 0) {
      const { arrived } = holds.splice(hold, 1)[0]!;
      await new Promise<void>((release) => arrived({ request, release }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(completion(model, answer)));
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: error.message } }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    holdNext: (marker) => new Promise((arrived) => holds.push({ marker, arrived })),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
