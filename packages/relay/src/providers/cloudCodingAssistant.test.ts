import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { codecFor, TranslationError } from '@switchyard/translate';
import fc from 'fast-check';
import { EventStreamDecoder, EventStreamError } from './awsEventStream.js';
import { CloudAssistantStreamDecoder, cloudAssistantEndpoint, encodeCloudAssistantRequest } from './cloudCodingAssistant.js';

/** An event-stream message, framed as AWS documents it (written independently of the decoder). */
function frame(headers: Record<string, string>, payload: string): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const v = Buffer.from(value);
    parts.push(Buffer.from([name.length]), Buffer.from(name), Buffer.from([7, v.length >> 8, v.length & 255]), v);
  }
  const head = Buffer.concat(parts);
  const body = Buffer.from(payload);
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(16 + head.length + body.length, 0);
  prelude.writeUInt32BE(head.length, 4);
  const preludeCrc = Buffer.alloc(4);
  preludeCrc.writeUInt32BE(crc32(prelude), 0);
  const message = Buffer.concat([prelude, preludeCrc, head, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(message), 0);
  return Buffer.concat([message, crc]);
}
const event = (type: string, payload: unknown) => frame({ ':message-type': 'event', ':event-type': type }, JSON.stringify(payload));

describe('AWS event-stream framing', () => {
  test('property: messages come out whole however the bytes are split', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 40 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (texts, cuts) => {
          const bytes = Buffer.concat(texts.map((content) => event('assistantResponseEvent', { content })));
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const decoder = new EventStreamDecoder();
          const out = [];
          let at = 0;
          for (const point of [...points, bytes.length]) {
            out.push(...decoder.push(bytes.subarray(at, point)));
            at = point;
          }
          assert.deepEqual(
            out.map((m) => JSON.parse(m.payload.toString()).content),
            texts,
          );
          assert.equal(decoder.pending, 0);
        },
      ),
    );
  });

  test('a corrupted message is refused by its checksum', () => {
    const bytes = event('assistantResponseEvent', { content: 'hello' });
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 6) ^ 1, bytes.length - 6);
    assert.throws(() => new EventStreamDecoder().push(bytes), EventStreamError);
    const prelude = event('assistantResponseEvent', { content: 'x' });
    prelude.writeUInt8(prelude.readUInt8(2) ^ 1, 2);
    assert.throws(() => new EventStreamDecoder().push(prelude), /prelude checksum/);
  });
});

describe('cloud coding-assistant wire format', () => {
  test('text, reasoning and tool-use events become neutral events; an exception becomes an error', () => {
    const decoder = new CloudAssistantStreamDecoder();
    const events = [
      ...decoder.push(
        Buffer.concat([
          event('reasoningContentEvent', { text: 'hmm', signature: 'sig' }),
          event('assistantResponseEvent', { content: 'Hi' }),
          event('toolUseEvent', { toolUseId: 't1', name: 'f', input: '{"a":' }),
          event('toolUseEvent', { toolUseId: 't1', name: 'f', input: '1}' }),
          event('toolUseEvent', { toolUseId: 't1', name: 'f', stop: true }),
          event('meteringEvent', { usage: 0.01 }),
        ]),
      ),
      ...decoder.end(),
    ];
    assert.deepEqual(
      events.map((e) => e.type),
      ['start', 'thinking', 'thinking_signature', 'text', 'tool_call_start', 'tool_call_delta', 'tool_call_delta', 'finish', 'end'],
    );
    assert.deepEqual(events.at(-2), { type: 'finish', stopReason: 'tool_use' });
    const failing = new CloudAssistantStreamDecoder();
    const error = failing.push(
      frame({ ':message-type': 'exception', ':exception-type': 'ThrottlingException' }, '{"message":"slow down"}'),
    );
    assert.deepEqual(error.at(-1), { type: 'error', message: 'slow down', errorType: 'ThrottlingException' });
    assert.deepEqual(failing.end(), [], 'a failed stream does not claim to be finished');
  });

  test('a stream cut inside a message is not finished', () => {
    const decoder = new CloudAssistantStreamDecoder();
    const bytes = event('assistantResponseEvent', { content: 'Hello' });
    decoder.push(bytes.subarray(0, bytes.length - 3));
    assert.deepEqual(decoder.end(), []);
  });

  test('the request: history and current turn, system prompt first, tools and results in the context', () => {
    const request = codecFor('anthropic-messages').decodeRequest(
      {
        system: 'sys',
        max_tokens: 10,
        tools: [{ name: 'f', input_schema: { type: 'object' } }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'q' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'calling' },
              { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'done' }] },
        ],
      },
      { model: 'claude-x', stream: true },
    );
    const body = encodeCloudAssistantRequest(request, {
      provider: { name: 'c', kind: 'cloud-coding-assistant' },
      credential: undefined,
      conversationId: 'conv-1',
    });
    assert.deepEqual(body, {
      conversationState: {
        chatTriggerType: 'MANUAL',
        conversationId: 'conv-1',
        currentMessage: {
          userInputMessage: {
            content: '',
            modelId: 'claude-x',
            origin: 'AI_EDITOR',
            userInputMessageContext: {
              toolResults: [{ toolUseId: 't1', content: [{ text: 'done' }], status: 'success' }],
              tools: [{ toolSpecification: { name: 'f', inputSchema: { json: { type: 'object' } } } }],
            },
          },
        },
        history: [
          {
            userInputMessage: {
              content: 'sys\n\nq',
              modelId: 'claude-x',
              origin: 'AI_EDITOR',
              images: [{ format: 'png', source: { bytes: 'AAAA' } }],
            },
          },
          { assistantResponseMessage: { content: 'calling', toolUses: [{ toolUseId: 't1', name: 'f', input: { a: 1 } }] } },
        ],
      },
    });
    assert.deepEqual(request.dropped, ['max_tokens']);
  });

  test('what it cannot take is refused by name; the region cannot steer the host', () => {
    const prefill = codecFor('anthropic-messages').decodeRequest(
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
        ],
      },
      { model: 'm', stream: false },
    );
    assert.throws(
      () => encodeCloudAssistantRequest(prefill, { provider: { name: 'c', kind: 'k' }, credential: undefined }),
      (e: unknown) => e instanceof TranslationError && e.param === 'messages',
    );
    assert.equal(
      cloudAssistantEndpoint({ name: 'c', kind: 'k' }, { id: 'x', token: 't', metadata: { region: 'eu-central-1' } }),
      'https://codewhisperer.eu-central-1.amazonaws.com',
    );
    assert.throws(
      () => cloudAssistantEndpoint({ name: 'c', kind: 'k' }, { id: 'x', token: 't', metadata: { region: 'evil.example/x' } }),
      /not an AWS region/,
    );
  });
});
