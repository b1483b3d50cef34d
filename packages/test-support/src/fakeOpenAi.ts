/**
 * @module fakeOpenAi
 * A local stand-in for an OpenAI-compatible upstream, on 127.0.0.1 port 0,
 * for tests and examples. It answers chat completions
 * (`<prefix>/chat/completions`) and the Responses API (`<prefix>/responses`),
 * plain and streamed, with tool calls, in OpenAI's documented shapes, and can
 * be scripted to fail in every way a real upstream does (see
 * {@link FakeBehaviour}).
 */
import {
  FAKE_TOOL_ARGUMENTS,
  FAKE_USAGE,
  type FakeBehaviour,
  type FakeDialect,
  type FakeUpstream,
  type FakeUpstreamOptions,
  type ReceivedRequest,
  startFakeUpstream,
} from './fakeUpstream.js';

export type { FakeBehaviour, ReceivedRequest };
/** Options of {@link startFakeOpenAi}. */
export type FakeOpenAiOptions = FakeUpstreamOptions;
/** A running fake OpenAI upstream. */
export type FakeOpenAi = FakeUpstream;

const now = () => Math.floor(Date.now() / 1000);
const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const typed = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const usage = { prompt_tokens: FAKE_USAGE.input, completion_tokens: FAKE_USAGE.output, total_tokens: FAKE_USAGE.input + FAKE_USAGE.output };
const responsesUsage = {
  input_tokens: FAKE_USAGE.input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: FAKE_USAGE.output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: FAKE_USAGE.input + FAKE_USAGE.output,
};

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: { type?: string; text?: string }) => (p?.type === 'text' || p?.type === 'input_text' ? (p.text ?? '') : ''))
    .join('');
}

function lastUser(items: unknown): string {
  const list = Array.isArray(items) ? (items as { role?: string; content?: unknown }[]) : [];
  const last = [...list].reverse().find((m) => m.role === 'user');
  return textOf(last?.content);
}

function chatCompletion(model: string, content: string, tool: string | undefined) {
  const message = tool
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_fake_1', type: 'function', function: { name: tool, arguments: FAKE_TOOL_ARGUMENTS } }],
      }
    : { role: 'assistant', content };
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: now(),
    model,
    choices: [{ index: 0, message, finish_reason: tool ? 'tool_calls' : 'stop', logprobs: null }],
    usage,
  };
}

function chatStream(model: string, parts: string[], tool: string | undefined, body: Record<string, unknown>) {
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: now(), model };
  const chunk = (delta: unknown, finish: string | null = null) => sse({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const head = [chunk({ role: 'assistant', content: '' })];
  if (tool) {
    head.push(chunk({ tool_calls: [{ index: 0, id: 'call_fake_1', type: 'function', function: { name: tool, arguments: '' } }] }));
    head.push(chunk({ tool_calls: [{ index: 0, function: { arguments: FAKE_TOOL_ARGUMENTS } }] }));
  }
  const tail = [chunk({}, tool ? 'tool_calls' : 'stop')];
  if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) tail.push(sse({ ...base, choices: [], usage }));
  tail.push('data: [DONE]\n\n');
  return { head, parts: tool ? [] : parts.map((content) => chunk({ content })), tail };
}

function responseObject(model: string, status: string, output: unknown[], withUsage: boolean) {
  return {
    id: 'resp_fake',
    object: 'response',
    created_at: now(),
    status,
    model,
    output,
    usage: withUsage ? responsesUsage : null,
    error: null,
    incomplete_details: null,
  };
}

function responsesOutput(content: string, tool: string | undefined) {
  if (tool)
    return [
      { id: 'fc_fake_1', type: 'function_call', status: 'completed', call_id: 'call_fake_1', name: tool, arguments: FAKE_TOOL_ARGUMENTS },
    ];
  return [
    {
      id: 'msg_fake_1',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: content, annotations: [] }],
    },
  ];
}

function responsesStream(model: string, parts: string[], tool: string | undefined) {
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) => typed(type, { sequence_number: sequence++, ...data });
  const head = [event('response.created', { response: responseObject(model, 'in_progress', [], false) })];
  head.push(event('response.in_progress', { response: responseObject(model, 'in_progress', [], false) }));
  const content = parts.join('');
  if (tool) {
    const item = { id: 'fc_fake_1', type: 'function_call', status: 'in_progress', call_id: 'call_fake_1', name: tool, arguments: '' };
    head.push(event('response.output_item.added', { output_index: 0, item }));
    head.push(event('response.function_call_arguments.delta', { item_id: 'fc_fake_1', output_index: 0, delta: FAKE_TOOL_ARGUMENTS }));
    head.push(event('response.function_call_arguments.done', { item_id: 'fc_fake_1', output_index: 0, arguments: FAKE_TOOL_ARGUMENTS }));
    head.push(
      event('response.output_item.done', { output_index: 0, item: { ...item, status: 'completed', arguments: FAKE_TOOL_ARGUMENTS } }),
    );
    return {
      head,
      parts: [],
      tail: [event('response.completed', { response: responseObject(model, 'completed', responsesOutput('', tool), true) })],
    };
  }
  const where = { item_id: 'msg_fake_1', output_index: 0, content_index: 0 };
  head.push(
    event('response.output_item.added', {
      output_index: 0,
      item: { id: 'msg_fake_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    }),
  );
  head.push(event('response.content_part.added', { ...where, part: { type: 'output_text', text: '', annotations: [] } }));
  const deltas = parts.map((delta) => event('response.output_text.delta', { ...where, delta, logprobs: [] }));
  const output = responsesOutput(content, undefined);
  const tail = [
    event('response.output_text.done', { ...where, text: content, logprobs: [] }),
    event('response.content_part.done', { ...where, part: { type: 'output_text', text: content, annotations: [] } }),
    event('response.output_item.done', { output_index: 0, item: output[0] }),
    event('response.completed', { response: responseObject(model, 'completed', output, true) }),
  ];
  return { head, parts: deltas, tail };
}

const isResponses = (body: Record<string, unknown>) => body.input !== undefined && body.messages === undefined;

/** OpenAI's side of the fake: chat completions and Responses. */
export const openAiDialect: FakeDialect = {
  route(method, path, _query, body) {
    if (method === 'GET' && path === '/models') return { kind: 'models' };
    if (method === 'POST' && (path === '/chat/completions' || path === '/responses'))
      return { kind: 'generate', stream: body?.stream === true, model: String(body?.model ?? '') };
    return undefined;
  },
  lastUserText: (body) =>
    isResponses(body) ? (typeof body.input === 'string' ? body.input : lastUser(body.input)) : lastUser(body.messages),
  toolName(body) {
    const tools = Array.isArray(body.tools) ? (body.tools as { name?: string; function?: { name?: string } }[]) : [];
    return tools.length > 0 ? (tools[0]?.function?.name ?? tools[0]?.name ?? 'tool') : undefined;
  },
  complete: (model, content, tool, body) =>
    isResponses(body) ? responseObject(model, 'completed', responsesOutput(content, tool), true) : chatCompletion(model, content, tool),
  stream: (model, parts, tool, body) => (isResponses(body) ? responsesStream(model, parts, tool) : chatStream(model, parts, tool, body)),
  models: (ids) => ({ object: 'list', data: ids.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })) }),
  count: () => ({}),
  error: (status, message) => ({ error: { message, type: status === 429 ? 'rate_limit_error' : 'error', code: null } }),
};

/**
 * Starts a fake OpenAI-compatible upstream (chat completions and Responses).
 *
 * @example
 * ```ts
 * const upstream = await startFakeOpenAi({ behaviour: (_req, n) => (n % 2 ? { type: 'status', status: 429 } : { type: 'ok' }) });
 * // providers: [{ name: 'fake', kind: 'openai-compatible', baseUrl: upstream.url, models: ['gpt-4o'] }]
 * await upstream.close();
 * ```
 */
export function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
  return startFakeUpstream(openAiDialect, { ...options, prefix: options.prefix ?? '/v1' });
}
