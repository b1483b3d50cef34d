import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AttemptEndEvent, RequestEndEvent } from './events.js';
import type { Transport } from './providers/adapter.js';
import { Relay } from './relay.js';
import type { RelayCooldowns, RelayCredentialPool, RelayHealth } from './relayOptions.js';
import { MemorySink } from './sink.js';
import { ScriptedStreams } from './testTransports.js';
import type { ApiFamily, ProviderConfig, RelayRequest } from './types.js';

// An upstream that answers 200 and streams some of its answer, then an error event: the client
// already has bytes, so its stream ends with the error, but the attempt must count as failed.

const openAiChunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const openAiError = (type: string, message: string) => `data: ${JSON.stringify({ error: { message, type } })}\n\n`;

const anthropicOpening = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":9,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}\n\n',
];
const anthropicError = (type: string, message: string) =>
  `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;

interface Recorded {
  /** What the credential pool was told (Anthropic providers need a credential; OpenAI-compatible ones run without). */
  pool: { id: string; kind: string; tokens?: number }[];
  cooldowns: { key: string; kind: string; status?: number }[];
  health: { provider: string; ok: boolean }[];
  attempts: AttemptEndEvent[];
  ends: RequestEndEvent[];
}

function relayOver(kind: ProviderConfig['kind'], transport: Transport): { relay: Relay; recorded: Recorded } {
  const recorded: Recorded = { pool: [], cooldowns: [], health: [], attempts: [], ends: [] };
  const pool = {
    acquire: () => ({ id: 'key-1', type: 'api_key' as const, token: 'sk-test' }),
    reportSuccess: (id: string, usage?: { inputTokens: number; outputTokens: number }) =>
      recorded.pool.push({ id, kind: 'success', tokens: (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0) }),
    reportFailure: (id: string, failure: { kind: string }) => recorded.pool.push({ id, kind: failure.kind }),
    refresh: () => Promise.reject(new Error('not refreshable')),
  } satisfies RelayCredentialPool;
  const cooldowns: RelayCooldowns = {
    recordFailure: (key, failure) =>
      recorded.cooldowns.push({ key, kind: failure.kind, ...(failure.status !== undefined ? { status: failure.status } : {}) }),
    recordSuccess() {},
  };
  const health: RelayHealth = { recordRequest: (provider, sample) => recorded.health.push({ provider, ok: sample.ok }) };
  const relay = new Relay({
    providers: [
      { name: 'up', kind, baseUrl: 'http://127.0.0.1:1/up', models: ['m'] },
      { name: 'spare', kind, baseUrl: 'http://127.0.0.1:1/spare', models: ['m'], priority: 1 },
    ],
    strategy: 'priority',
    transport,
    cooldowns,
    health,
    ...(kind === 'anthropic' ? { credentials: { pool: () => pool } } : {}),
  });
  relay.events.on('attempt:end', (e) => recorded.attempts.push(e));
  relay.events.on('request:end', (e) => recorded.ends.push(e));
  return { relay, recorded };
}

function streamed(ingress: ApiFamily): RelayRequest {
  const body =
    ingress === 'anthropic-messages'
      ? { model: 'm', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }
      : { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] };
  return { requestId: 'req-1', ingress, model: 'm', stream: true, body, rawBody: Buffer.from(JSON.stringify(body)) };
}

const errorEvents = (text: string) => text.split('\n\n').filter((e) => e.includes('"error"'));

describe('an upstream error event after the first byte reached the client', () => {
  test('OpenAI → OpenAI (pass-through), a rate limit: the client gets the chunks and the error once; the provider cools down as for a 429', async () => {
    const transport = new ScriptedStreams({
      up: [openAiChunk('Hel'), openAiChunk('lo'), openAiError('rate_limit_error', 'Rate limit reached')],
    });
    const { relay, recorded } = relayOver('openai-compatible', transport);
    const sink = new MemorySink();
    await relay.handle(streamed('openai-chat'), sink);
    assert.equal(sink.status, 200);
    assert.equal(transport.sent.length, 1, 'bytes went out: no retry');
    const text = sink.text();
    assert.ok(text.startsWith(openAiChunk('Hel') + openAiChunk('lo')), text);
    assert.deepEqual(
      errorEvents(text),
      [openAiError('rate_limit_error', 'Rate limit reached').trim()],
      'the upstream error, not a second one',
    );
    assert.deepEqual(recorded.cooldowns, [{ key: 'up', kind: 'rate_limit' }]);
    assert.deepEqual(recorded.health, [], 'a rate limit is not a health failure');
    assert.equal(recorded.attempts[0]?.outcome, 'error');
    assert.equal(recorded.attempts[0]?.httpStatus, 429);
    assert.equal(recorded.ends[0]?.outcome, 'error');
    assert.equal(recorded.ends[0]?.errorType, 'rate_limit');
    assert.equal(recorded.ends[0]?.httpStatus, 200, 'the client got a 200 stream');
  });

  test('OpenAI → OpenAI (pass-through), a server error: health sees a failure and the provider an error with its status', async () => {
    const transport = new ScriptedStreams({
      up: [openAiChunk('Hel'), openAiChunk('lo'), openAiError('server_error', 'The server had an error')],
    });
    const { relay, recorded } = relayOver('openai-compatible', transport);
    const sink = new MemorySink();
    await relay.handle(streamed('openai-chat'), sink);
    assert.equal(transport.sent.length, 1);
    assert.match(sink.text(), /"content":"lo"/);
    assert.equal(errorEvents(sink.text()).length, 1);
    assert.deepEqual(recorded.health, [{ provider: 'up', ok: false }]);
    assert.deepEqual(recorded.cooldowns, [{ key: 'up', kind: 'error', status: 500 }]);
    assert.equal(recorded.attempts[0]?.httpStatus, 500);
    assert.equal(recorded.ends[0]?.errorType, 'server');
  });

  test('Anthropic → Anthropic (pass-through), an overload: a 529 for health and cooldowns, the event forwarded as it came', async () => {
    const overloaded = anthropicError('overloaded_error', 'Overloaded');
    const transport = new ScriptedStreams({ up: [...anthropicOpening, overloaded] });
    const { relay, recorded } = relayOver('anthropic', transport);
    const sink = new MemorySink();
    await relay.handle(streamed('anthropic-messages'), sink);
    assert.equal(transport.sent.length, 1);
    assert.equal(sink.text(), [...anthropicOpening, overloaded].join(''));
    assert.deepEqual(recorded.health, [{ provider: 'up', ok: false }]);
    assert.deepEqual(recorded.cooldowns, [{ key: 'up', kind: 'error', status: 529 }]);
    assert.deepEqual(
      recorded.pool,
      [{ id: 'key-1', kind: 'success', tokens: 10 }],
      "the tokens used are counted; an overload is not the key's fault",
    );
    assert.equal(recorded.ends[0]?.outcome, 'error');
  });

  test('Anthropic → OpenAI (translated), an overload: the client gets the text and one error event; health sees a 529', async () => {
    const transport = new ScriptedStreams({ up: [...anthropicOpening, anthropicError('overloaded_error', 'Overloaded')] });
    const { relay, recorded } = relayOver('anthropic', transport);
    const sink = new MemorySink();
    await relay.handle(streamed('openai-chat'), sink);
    assert.equal(transport.sent.length, 1);
    assert.match(sink.text(), /"content":"Hel"/);
    assert.match(sink.text(), /"content":"lo"/);
    assert.equal(errorEvents(sink.text()).length, 1, sink.text());
    assert.match(errorEvents(sink.text())[0]!, /Overloaded/);
    assert.deepEqual(recorded.health, [{ provider: 'up', ok: false }]);
    assert.deepEqual(recorded.cooldowns, [{ key: 'up', kind: 'error', status: 529 }]);
    assert.equal(recorded.attempts[0]?.httpStatus, 529);
    assert.equal(recorded.ends[0]?.outcome, 'error');
  });

  test('Anthropic → OpenAI (translated), a rate limit: the credential is reported rate-limited, once, after its tokens', async () => {
    const transport = new ScriptedStreams({ up: [...anthropicOpening, anthropicError('rate_limit_error', 'Slow down')] });
    const { relay, recorded } = relayOver('anthropic', transport);
    const sink = new MemorySink();
    await relay.handle(streamed('openai-chat'), sink);
    assert.equal(transport.sent.length, 1);
    assert.match(sink.text(), /"content":"lo"/);
    assert.equal(errorEvents(sink.text()).length, 1);
    assert.match(errorEvents(sink.text())[0]!, /Slow down/);
    // The tokens the broken stream used are the credential's; then the rate limit cools it down.
    assert.deepEqual(recorded.pool, [
      { id: 'key-1', kind: 'success', tokens: 10 },
      { id: 'key-1', kind: 'rate_limit' },
    ]);
    assert.deepEqual(recorded.cooldowns, [], 'the pool takes the rate limit, not the provider');
    assert.deepEqual(recorded.health, []);
    assert.equal(recorded.attempts[0]?.httpStatus, 429);
    assert.equal(recorded.ends[0]?.errorType, 'rate_limit');
  });
});
