import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RequestEndEvent } from './events.js';
import type { Transport } from './providers/adapter.js';
import { Relay } from './relay.js';
import type { RelayCooldowns } from './relayOptions.js';
import { MemorySink } from './sink.js';
import { ScriptedStreams } from './testing/scriptedStreams.js';
import type { RelayRequest } from './types.js';

const data = (json: unknown) => `data: ${JSON.stringify(json)}\n\n`;
const chunk = (delta: unknown, finish: string | null = null) =>
  data({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt', choices: [{ index: 0, delta, finish_reason: finish }] });
const answer = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({}, 'stop'), 'data: [DONE]\n\n'];

/** An Anthropic client's streamed request (translated to the OpenAI-compatible providers). */
function anthropicRequest(): RelayRequest {
  const body = { model: 'm', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] };
  return { requestId: 'req-1', ingress: 'anthropic-messages', model: 'm', stream: true, body, rawBody: Buffer.from(JSON.stringify(body)) };
}

function relayOver(transport: Transport, names: string[], cooldowns?: RelayCooldowns): Relay {
  return new Relay({
    providers: names.map((name, priority) => ({
      name,
      kind: 'openai-compatible',
      baseUrl: `http://127.0.0.1:1/${name}`,
      models: ['m'],
      priority,
    })),
    strategy: 'priority',
    transport,
    ...(cooldowns ? { cooldowns } : {}),
  });
}

describe('an upstream stream that opens with an error event, before any byte reached the client', () => {
  test('a rate limit counts as a 429 would: the provider cools down and the client gets a 429, not a 200 stream', async () => {
    const transport = new ScriptedStreams({ limited: [data({ error: { message: 'Rate limit reached', type: 'rate_limit_error' } })] });
    const recorded: { key: string; kind: string }[] = [];
    const cooldowns: RelayCooldowns = { recordFailure: (key, failure) => recorded.push({ key, kind: failure.kind }), recordSuccess() {} };
    const relay = relayOver(transport, ['limited'], cooldowns);
    const sink = new MemorySink();
    const end = await relay.handle(anthropicRequest(), sink);
    assert.equal(sink.status, 429);
    const body = JSON.parse(sink.text()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.error.type, 'rate_limit_error');
    assert.match(body.error.message, /Rate limit reached/);
    // As for a 429 status: each attempt (the budget is 3, and nothing holds the provider out here) is a rate limit.
    assert.deepEqual(recorded, Array(3).fill({ key: 'limited', kind: 'rate_limit' }));
    assert.equal(end.errorType, 'rate_limit');
  });

  test('same family (OpenAI → OpenAI, passed through): an overload is tried on the next provider too', async () => {
    const transport = new ScriptedStreams({
      busy: [data({ error: { message: 'The server is overloaded', type: 'server_error' } })],
      fine: answer,
    });
    const relay = relayOver(transport, ['busy', 'fine']);
    const body = { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const sink = new MemorySink();
    await relay.handle(
      { requestId: 'req-1', ingress: 'openai-chat', model: 'm', stream: true, body, rawBody: Buffer.from(JSON.stringify(body)) },
      sink,
    );
    assert.deepEqual(transport.sent, ['busy', 'fine'], 'nothing went out: tried on the next provider');
    assert.equal(sink.status, 200);
    assert.equal(sink.text(), answer.join(''));
  });

  test('an overload (a 5xx type) is tried on the next provider, whose answer the client gets', async () => {
    const transport = new ScriptedStreams({
      busy: [data({ error: { message: 'The server is overloaded', type: 'server_error' } })],
      fine: answer,
    });
    const relay = relayOver(transport, ['busy', 'fine']);
    const ends: RequestEndEvent[] = [];
    relay.events.on('request:end', (e) => ends.push(e));
    const sink = new MemorySink();
    await relay.handle(anthropicRequest(), sink);
    assert.equal(sink.status, 200);
    assert.deepEqual(transport.sent, ['busy', 'fine']);
    assert.match(sink.text(), /"text":"Hello"/);
    assert.doesNotMatch(sink.text(), /overloaded/, 'nothing of the failed attempt reached the client');
    assert.equal(ends[0]?.provider, 'fine');
  });

  test("an error that is the request's own fault (invalid_request_error) is forwarded in the stream, not retried", async () => {
    const transport = new ScriptedStreams({
      strict: [data({ error: { message: 'bad field', type: 'invalid_request_error' } })],
      fine: answer,
    });
    const relay = relayOver(transport, ['strict', 'fine']);
    const sink = new MemorySink();
    await relay.handle(anthropicRequest(), sink);
    assert.deepEqual(transport.sent, ['strict']);
    assert.equal(sink.status, 200);
    assert.match(sink.text(), /event: error\n.*"invalid_request_error"/);
  });

  test('an error after the first byte still ends the stream with an error event (no retry once bytes went out)', async () => {
    const transport = new ScriptedStreams({
      flaky: [chunk({ role: 'assistant', content: 'Hel' }), data({ error: { message: 'Rate limit reached', type: 'rate_limit_error' } })],
      fine: answer,
    });
    const relay = relayOver(transport, ['flaky', 'fine']);
    const sink = new MemorySink();
    await relay.handle(anthropicRequest(), sink);
    assert.deepEqual(transport.sent, ['flaky']);
    assert.equal(sink.status, 200);
    assert.match(sink.text(), /"text":"Hel"/);
    assert.match(sink.text(), /event: error\n.*"rate_limit_error"/);
  });
});
