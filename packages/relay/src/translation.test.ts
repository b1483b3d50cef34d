import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RequestEndEvent } from '@switchyard/core-routing';
import { FakeScheduler } from '@switchyard/runtime';
import type { Transport } from './providers/adapter.js';
import { Relay, type RelayCredentialPool } from './relay.js';
import { MemorySink } from './sink.js';
import type { ApiFamily, RelayRequest, UpstreamRequest, UpstreamResponse } from './types.js';

const pool: RelayCredentialPool = {
  acquire: () => ({ id: 'k1', token: 'upstream-secret' }),
  reportSuccess() {},
  reportUsage() {},
  reportFailure() {},
  refresh: async () => ({ id: 'k1', token: 'upstream-secret' }),
};

/** A transport that answers with the given SSE events, pausing where `gate` says until released. */
class ScriptedTransport implements Transport {
  sent: UpstreamRequest[] = [];
  private release: (() => void) | undefined;
  constructor(
    private readonly events: string[],
    private readonly pauseAfter = -1,
  ) {}
  open(): void {
    this.release?.();
  }
  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    this.sent.push(request);
    const events = this.events;
    const pauseAfter = this.pauseAfter;
    const wait = new Promise<void>((resolve) => {
      this.release = resolve;
    });
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: (async function* () {
        for (const [i, event] of events.entries()) {
          yield Buffer.from(event);
          if (i === pauseAfter) await wait;
        }
      })(),
      cancel() {},
    };
  }
}

const anthropicEvents = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","usage":{"input_tokens":9,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there"}}\n\nevent: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n',
];

function request(ingress: ApiFamily, body: Record<string, unknown>, stream: boolean): RelayRequest {
  return { requestId: 'req-1', ingress, model: 'claude', stream, body, rawBody: Buffer.from(JSON.stringify(body)) };
}

describe('relay: translation between families', () => {
  test('a translated stream gets keep-alives in its silences (FakeScheduler), then ends properly with usage counted', async () => {
    const scheduler = new FakeScheduler(Date.UTC(2026, 0, 1));
    const transport = new ScriptedTransport(anthropicEvents, 1);
    const relay = new Relay({
      providers: [{ name: 'claude', kind: 'anthropic', models: ['claude'] }],
      transport,
      scheduler,
      keepAliveMs: 15_000,
      credentials: { pool: () => pool },
    });
    const ends: RequestEndEvent[] = [];
    relay.events.on('request:end', (e) => ends.push(e));
    const sink = new MemorySink();
    const done = relay.handle(
      request('openai-chat', { model: 'claude', messages: [{ role: 'user', content: 'hi' }], stream: true }, true),
      sink,
    );
    await scheduler.advance(0);
    assert.match(sink.text(), /"content":"Hello"/);
    assert.equal(sink.text().includes('keep-alive'), false);
    await scheduler.advance(14_999);
    assert.equal(sink.text().includes('keep-alive'), false, 'no keep-alive before the interval');
    await scheduler.advance(1);
    assert.equal(sink.text().match(/: keep-alive\n\n/g)?.length, 1);
    await scheduler.advance(15_000);
    assert.equal(sink.text().match(/: keep-alive\n\n/g)?.length, 2);
    transport.open();
    await done;
    assert.ok(sink.text().endsWith('data: [DONE]\n\n'));
    assert.equal(scheduler.pending, 0, 'the keep-alive timer is gone');
    assert.deepEqual(ends[0]?.tokens, { input: 9, output: 3 });
    assert.equal(transport.sent[0]?.headers['x-api-key'], 'upstream-secret');
    assert.equal(JSON.parse(String(transport.sent[0]?.body)).max_tokens, 4096);
  });

  test('keep-alives can be turned off', async () => {
    const scheduler = new FakeScheduler(0);
    const transport = new ScriptedTransport(anthropicEvents, 1);
    const relay = new Relay({
      providers: [{ name: 'claude', kind: 'anthropic', models: ['claude'] }],
      transport,
      scheduler,
      keepAliveMs: 0,
      credentials: { pool: () => pool },
    });
    const sink = new MemorySink();
    const done = relay.handle(
      request('anthropic-messages', { model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: true }, true),
      sink,
    );
    await scheduler.advance(60_000);
    assert.equal(scheduler.pending, 0);
    transport.open();
    await done;
    assert.equal(sink.text().includes('ping'), false);
    assert.equal(sink.text(), anthropicEvents.join(''), 'same family: the bytes pass through untouched');
  });

  test('a request the provider family cannot express is a 400 in the client’s shape, and nothing goes upstream', async () => {
    const transport = new ScriptedTransport(anthropicEvents);
    const relay = new Relay({
      providers: [{ name: 'claude', kind: 'anthropic', models: ['claude'] }],
      transport,
      credentials: { pool: () => pool },
    });
    const sink = new MemorySink();
    await relay.handle(
      request(
        'gemini',
        { contents: [{ role: 'user', parts: [{ text: 'x' }] }], generationConfig: { responseMimeType: 'application/json' } },
        false,
      ),
      sink,
    );
    assert.equal(sink.status, 400);
    const body = JSON.parse(sink.text()) as { error: { status: string; details: { fieldViolations?: { field: string }[] }[] } };
    assert.equal(body.error.status, 'INVALID_ARGUMENT');
    assert.equal(body.error.details.flatMap((d) => d.fieldViolations ?? [])[0]?.field, 'response_format');
    assert.equal(transport.sent.length, 0);
  });

  test('an empty user message to a provider that refuses empty turns is a 400 invalid_request in the client’s shape, before any upstream call', async () => {
    const transport = new ScriptedTransport(anthropicEvents);
    const relay = new Relay({
      providers: [
        { name: 'claude', kind: 'anthropic', models: ['claude'] },
        { name: 'gemini', kind: 'gemini', models: ['gemini'] },
      ],
      transport,
      credentials: { pool: () => pool },
    });
    for (const model of ['claude', 'gemini']) {
      const sink = new MemorySink();
      const body = {
        model,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: '' },
        ],
      };
      await relay.handle({ ...request('openai-chat', body, false), model }, sink);
      assert.equal(sink.status, 400, model);
      const error = (JSON.parse(sink.text()) as { error: { type: string; code: string; param: string } }).error;
      assert.deepEqual([error.type, error.code, error.param], ['invalid_request_error', 'invalid_request', 'messages[1].content'], model);
    }
    const sink = new MemorySink();
    const anthropicBody = { model: 'gemini', max_tokens: 10, messages: [{ role: 'user', content: [] }] };
    await relay.handle({ ...request('anthropic-messages', anthropicBody, false), model: 'gemini' }, sink);
    assert.equal(sink.status, 400);
    const anthropicError = JSON.parse(sink.text()) as { type: string; error: { type: string; code: string; param: string } };
    assert.deepEqual(
      [anthropicError.type, anthropicError.error.type, anthropicError.error.code, anthropicError.error.param],
      ['error', 'invalid_request_error', 'invalid_request', 'messages[0].content'],
    );
    assert.equal(transport.sent.length, 0);
  });

  describe('a provider’s tool call whose arguments are not JSON, for a client family that wants an object', () => {
    const badCall = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": Paris' } };
    const answering = (contentType: string, chunks: string[]): Transport => ({
      send: async () => ({
        status: 200,
        headers: { 'content-type': contentType },
        body: (async function* () {
          for (const chunk of chunks) yield Buffer.from(chunk);
        })(),
        cancel() {},
      }),
    });
    const relayOn = (transport: Transport) =>
      new Relay({ providers: [{ name: 'gpt', kind: 'openai', models: ['gpt'] }], transport, credentials: { pool: () => pool } });

    test('complete: an unreadable upstream answer (502 upstream_error in the client’s shape), never a 500 or a 400', async () => {
      const completion = {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'gpt',
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [badCall] }, finish_reason: 'tool_calls' }],
      };
      const sink = new MemorySink();
      const body = { model: 'gpt', max_tokens: 10, messages: [{ role: 'user', content: 'Weather?' }] };
      await relayOn(answering('application/json', [JSON.stringify(completion)])).handle(
        { ...request('anthropic-messages', body, false), model: 'gpt' },
        sink,
      );
      assert.equal(sink.status, 502);
      const answer = JSON.parse(sink.text()) as { type: string; error: { type: string; code: string; message: string } };
      assert.equal(answer.type, 'error');
      assert.equal(answer.error.code, 'upstream_error');
      assert.match(answer.error.message, /not JSON/);
    });

    test('streamed to Gemini (which holds calls until whole): the stream ends with Gemini’s error event, not a thrown error', async () => {
      const chunk = (delta: unknown, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const events = [
        chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, ...badCall }] }),
        chunk({}, 'tool_calls'),
        'data: [DONE]\n\n',
      ];
      const sink = new MemorySink();
      const body = { contents: [{ role: 'user', parts: [{ text: 'Weather?' }] }] };
      await relayOn(answering('text/event-stream', events)).handle({ ...request('gemini', body, true), model: 'gpt' }, sink);
      assert.ok(sink.ended, 'the client’s stream is ended');
      const last = sink.text().trim().split('\n\n').at(-1)!;
      const error = (JSON.parse(last.replace(/^data: /, '')) as { error?: { message: string; details: { reason?: string }[] } }).error;
      assert.ok(error, `an error event ends the stream: ${last}`);
      assert.match(
        error.message,
        /^the provider returned tool call arguments that are not JSON/,
        'said as it is, not as a broken connection',
      );
      assert.equal(error.details[0]?.reason, 'UPSTREAM_ERROR');
    });
  });

  test('a non-streaming translated answer is re-encoded, with usage and the dropped fields named', async () => {
    const message = {
      id: 'msg_9',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [{ type: 'text', text: 'Bonjour' }],
      stop_reason: 'max_tokens',
      stop_sequence: null,
      usage: { input_tokens: 4, output_tokens: 2, cache_read_input_tokens: 6 },
    };
    const transport: Transport = {
      send: async () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: (async function* () {
          yield Buffer.from(JSON.stringify(message));
        })(),
        cancel() {},
      }),
    };
    const relay = new Relay({
      providers: [{ name: 'claude', kind: 'anthropic', models: ['claude'] }],
      transport,
      credentials: { pool: () => pool },
    });
    const sink = new MemorySink();
    await relay.handle(
      request('openai-responses', { model: 'claude', input: 'hi', stop: ['x'], metadata: { a: 'b' }, store: true }, false),
      sink,
    );
    assert.equal(sink.status, 200);
    const body = JSON.parse(sink.text()) as {
      status: string;
      incomplete_details: unknown;
      usage: Record<string, unknown>;
      output: { content: { text: string }[] }[];
    };
    assert.equal(body.status, 'incomplete');
    assert.deepEqual(body.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(body.output[0]?.content[0]?.text, 'Bonjour');
    assert.deepEqual(body.usage.input_tokens_details, { cached_tokens: 6 });
    assert.equal(body.usage.input_tokens, 10);
    assert.equal(sink.headers['x-switchyard-dropped-fields'], 'stop, metadata, store');
  });
});
