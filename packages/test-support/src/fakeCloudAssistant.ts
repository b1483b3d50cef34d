/**
 * @module fakeCloudAssistant
 * A local stand-in for the cloud coding-assistant API
 * (`POST /generateAssistantResponse`): it reads the `conversationState`
 * request and always answers with a stream in AWS event-stream framing
 * (binary messages with CRC32 checksums): `assistantResponseEvent` text
 * pieces, `toolUseEvent` argument fragments ending with `stop`, and a
 * closing `meteringEvent`. Scriptable like the other fakes.
 */
import { crc32 } from 'node:zlib';
import { FAKE_TOOL_ARGUMENTS, type FakeDialect, type FakeUpstream, type FakeUpstreamOptions, startFakeUpstream } from './fakeUpstream.js';

/** One event-stream message with string headers, as AWS frames it. */
export function eventStreamFrame(headers: Record<string, string>, payload: unknown): Buffer {
  const encodedHeaders = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const n = Buffer.from(name);
      const v = Buffer.from(value);
      const header = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
      header.writeUInt8(n.length, 0);
      n.copy(header, 1);
      header.writeUInt8(7, 1 + n.length);
      header.writeUInt16BE(v.length, 2 + n.length);
      v.copy(header, 4 + n.length);
      return header;
    }),
  );
  const body = Buffer.from(JSON.stringify(payload));
  const total = 12 + encodedHeaders.length + body.length + 4;
  const frame = Buffer.alloc(total);
  frame.writeUInt32BE(total, 0);
  frame.writeUInt32BE(encodedHeaders.length, 4);
  frame.writeUInt32BE(crc32(frame.subarray(0, 8)), 8);
  encodedHeaders.copy(frame, 12);
  body.copy(frame, 12 + encodedHeaders.length);
  frame.writeUInt32BE(crc32(frame.subarray(0, total - 4)), total - 4);
  return frame;
}

const event = (type: string, payload: unknown) =>
  eventStreamFrame({ ':message-type': 'event', ':event-type': type, ':content-type': 'application/json' }, payload);

interface UserInput {
  content?: string;
  modelId?: string;
  userInputMessageContext?: { tools?: { toolSpecification?: { name?: string } }[] };
}

const current = (body: Record<string, unknown>) =>
  ((body.conversationState as { currentMessage?: { userInputMessage?: UserInput } } | undefined)?.currentMessage?.userInputMessage ??
    {}) as UserInput;

/** The cloud coding assistant's side of the fake. */
export const cloudAssistantDialect: FakeDialect = {
  streamContentType: 'application/vnd.amazon.eventstream',
  route(method, path, _query, body) {
    if (method === 'POST' && path === '/generateAssistantResponse')
      return { kind: 'generate', stream: true, model: String(body ? (current(body).modelId ?? '') : '') };
    return undefined;
  },
  // The system prompt opens the first user turn; the echo is of what the user said last.
  lastUserText: (body) => (current(body).content ?? '').split('\n\n').at(-1) ?? '',
  toolName: (body) => current(body).userInputMessageContext?.tools?.[0]?.toolSpecification?.name,
  complete: () => {
    throw new Error('the cloud coding assistant only streams');
  },
  stream(_model, parts, tool) {
    const tail = [event('meteringEvent', { unit: 'credit', unitPlural: 'credits', usage: 0.02 })];
    if (tool) {
      const half = Math.floor(FAKE_TOOL_ARGUMENTS.length / 2);
      return {
        head: [event('toolUseEvent', { toolUseId: 'tooluse_fake_1', name: tool, input: FAKE_TOOL_ARGUMENTS.slice(0, half) })],
        parts: [],
        tail: [
          event('toolUseEvent', { toolUseId: 'tooluse_fake_1', name: tool, input: FAKE_TOOL_ARGUMENTS.slice(half) }),
          event('toolUseEvent', { toolUseId: 'tooluse_fake_1', name: tool, stop: true }),
          ...tail,
        ],
      };
    }
    return { head: [], parts: parts.map((content) => event('assistantResponseEvent', { content })), tail };
  },
  models: () => ({}),
  count: () => ({}),
  error: (status, message) => ({
    message,
    __type: status === 429 ? 'ThrottlingException' : status >= 500 ? 'InternalServerException' : 'ValidationException',
  }),
};

/**
 * Starts a fake cloud coding-assistant upstream.
 *
 * @example
 * ```ts
 * const upstream = await startFakeCloudAssistant();
 * // providers: [{ name: 'cloud', kind: 'cloud-coding-assistant', baseUrl: upstream.url, models: ['claude-sonnet-4'] }]
 * ```
 */
export function startFakeCloudAssistant(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  return startFakeUpstream(cloudAssistantDialect, { ...options, prefix: options.prefix ?? '' });
}
