/**
 * @module fakeAnthropic
 * A local stand-in for Anthropic's Messages API (`<prefix>/messages`,
 * `<prefix>/messages/count_tokens`, `<prefix>/models`), plain and streamed
 * with the full event sequence (`message_start`, a `ping`, content blocks,
 * `message_delta`, `message_stop`), tool use included. Scriptable like the
 * other fakes.
 */
import {
  FAKE_TOOL_ARGUMENTS,
  FAKE_USAGE,
  type FakeDialect,
  type FakeUpstream,
  type FakeUpstreamOptions,
  startFakeUpstream,
} from './fakeUpstream.js';

const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b: { type?: string; text?: string }) => (b?.type === 'text' ? (b.text ?? '') : '')).join('');
}

function message(model: string, content: unknown[], stop: string | null, output: number) {
  return {
    id: 'msg_fake_1',
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: FAKE_USAGE.input, output_tokens: output },
  };
}

/** Anthropic's side of the fake. */
export const anthropicDialect: FakeDialect = {
  route(method, path, _query, body) {
    if (method === 'GET' && path === '/models') return { kind: 'models' };
    if (method === 'POST' && path === '/messages')
      return { kind: 'generate', stream: body?.stream === true, model: String(body?.model ?? '') };
    if (method === 'POST' && path === '/messages/count_tokens') return { kind: 'count', model: String(body?.model ?? '') };
    return undefined;
  },
  lastUserText(body) {
    const messages = Array.isArray(body.messages) ? (body.messages as { role?: string; content?: unknown }[]) : [];
    return textOf([...messages].reverse().find((m) => m.role === 'user')?.content);
  },
  toolName(body) {
    const tools = Array.isArray(body.tools) ? (body.tools as { name?: string }[]) : [];
    return tools.length > 0 ? (tools[0]?.name ?? 'tool') : undefined;
  },
  complete(model, content, tool) {
    const blocks = tool
      ? [{ type: 'tool_use', id: 'toolu_fake_1', name: tool, input: JSON.parse(FAKE_TOOL_ARGUMENTS) }]
      : [{ type: 'text', text: content }];
    return message(model, blocks, tool ? 'tool_use' : 'end_turn', FAKE_USAGE.output);
  },
  stream(model, parts, tool) {
    const head = [event('message_start', { message: message(model, [], null, 1) }), event('ping', {})];
    const tail: string[] = [];
    if (tool) {
      head.push(event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_fake_1', name: tool, input: {} } }));
      const half = Math.floor(FAKE_TOOL_ARGUMENTS.length / 2);
      for (const piece of [FAKE_TOOL_ARGUMENTS.slice(0, half), FAKE_TOOL_ARGUMENTS.slice(half)])
        head.push(event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: piece } }));
    } else head.push(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    tail.push(event('content_block_stop', { index: 0 }));
    tail.push(
      event('message_delta', {
        delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: FAKE_USAGE.output },
      }),
    );
    tail.push(event('message_stop', {}));
    const deltas = tool ? [] : parts.map((text) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }));
    return { head, parts: deltas, tail };
  },
  models: (ids) => ({
    data: ids.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })),
    has_more: false,
    first_id: ids[0] ?? null,
    last_id: ids.at(-1) ?? null,
  }),
  // A count that depends on the input, so tests can tell it came from here.
  count: (body) => ({ input_tokens: Math.ceil(JSON.stringify(body.messages ?? []).length / 4) }),
  error: (status, message) => ({
    type: 'error',
    error: {
      type:
        status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : status >= 500 ? 'api_error' : 'invalid_request_error',
      message,
    },
  }),
};

/**
 * Starts a fake Anthropic upstream.
 *
 * @example
 * ```ts
 * const upstream = await startFakeAnthropic();
 * // providers: [{ name: 'claude', kind: 'anthropic', baseUrl: upstream.url, models: ['claude-sonnet-4'] }]
 * ```
 */
export function startFakeAnthropic(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  return startFakeUpstream(anthropicDialect, { ...options, prefix: options.prefix ?? '/v1' });
}
