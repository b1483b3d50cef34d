import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RequestEndEvent } from '@switchyard/core-routing';
import type { Transport } from './providers/adapter.js';
import { Relay } from './relay.js';
import type { RelayCooldowns, RelayCredentialPool } from './relayOptions.js';
import { MemorySink } from './sink.js';
import { anthropicError, ScriptedStreams } from './testing/scriptedStreams.js';
import type { ApiFamily, ProviderConfig, RelayRequest } from './types.js';

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

/** An event named after its `type`, as Anthropic and Responses write them. */
const named = (json: { type: string; [field: string]: unknown }) => `event: ${json.type}\ndata: ${JSON.stringify(json)}\n\n`;
const messageStart = named({
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', usage: { input_tokens: 9, output_tokens: 1 } },
});
const ping = named({ type: 'ping' });
/** A whole Anthropic answer, its opening events each in a chunk of their own. */
const anthropicAnswer = [
  messageStart,
  ping,
  named({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
    named({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
  named({ type: 'content_block_stop', index: 0 }) +
    named({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } }) +
    named({ type: 'message_stop' }),
];

/** Providers of one kind, tried in the order named, each with a pool of one key (so a rate-limited one moves on to the next). */
function relayOfKind(kind: ProviderConfig['kind'], transport: Transport, names: string[]): Relay {
  const pool: RelayCredentialPool = {
    acquire(options) {
      if (options?.exclude?.has('key-1')) throw new Error('no credential left');
      return { id: 'key-1', type: 'api_key', token: 'sk-test' };
    },
    reportSuccess() {},
    reportUsage() {},
    reportFailure() {},
    refresh: () => Promise.reject(new Error('not refreshable')),
  };
  return new Relay({
    providers: names.map((name, priority) => ({ name, kind, baseUrl: `http://127.0.0.1:1/${name}`, models: ['m'], priority })),
    strategy: 'priority',
    transport,
    credentials: { pool: () => pool },
  });
}

function streamedRequest(ingress: ApiFamily): RelayRequest {
  const body: Record<string, unknown> =
    ingress === 'openai-responses'
      ? { model: 'm', stream: true, input: 'hi' }
      : { model: 'm', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] };
  return { requestId: 'req-1', ingress, model: 'm', stream: true, body, rawBody: Buffer.from(JSON.stringify(body)) };
}

const count = (text: string, fragment: string) => text.split(fragment).length - 1;

/** An Anthropic client's stream over two Anthropic providers: `first` streams these chunks, `fine` the whole answer. */
async function overAnthropic(first: string[]): Promise<{ sent: string[]; sink: MemorySink }> {
  const transport = new ScriptedStreams({ first, fine: anthropicAnswer });
  const sink = new MemorySink();
  await relayOfKind('anthropic', transport, ['first', 'fine']).handle(streamedRequest('anthropic-messages'), sink);
  return { sent: transport.sent, sink };
}

describe("an error after the stream's opening events (a start event, pings, comments), in a later chunk, before any of the answer", () => {
  test('Anthropic → OpenAI (translated): message_start alone, then an overload: tried on the next provider, whose answer the client gets', async () => {
    const transport = new ScriptedStreams({
      busy: [messageStart, anthropicError('overloaded_error', 'Overloaded')],
      fine: anthropicAnswer,
    });
    const sink = new MemorySink();
    await relayOfKind('anthropic', transport, ['busy', 'fine']).handle(streamedRequest('openai-chat'), sink);
    assert.deepEqual(transport.sent, ['busy', 'fine']);
    assert.equal(sink.status, 200);
    const text = sink.text();
    assert.doesNotMatch(text, /Overloaded/, 'nothing of the failed attempt reached the client');
    assert.equal(count(text, '"role":"assistant"'), 1, `one role chunk: ${text}`);
    assert.match(text, /"content":"Hello"/);
    assert.ok(text.endsWith('data: [DONE]\n\n'));
  });

  test('Anthropic → Anthropic (passed through): message_start, then a ping, then a rate limit: retried; the client gets the next answer byte for byte', async () => {
    const { sent, sink } = await overAnthropic([messageStart, ping, anthropicError('rate_limit_error', 'Slow down')]);
    assert.deepEqual(sent, ['first', 'fine']);
    assert.equal(sink.status, 200);
    assert.equal(sink.text(), anthropicAnswer.join(''), 'the held opening goes out with the answer, once, in order');
  });

  test('Anthropic (passed through): a first chunk that is only a ping, then an overload: retried', async () => {
    const { sent, sink } = await overAnthropic([ping, anthropicError('overloaded_error', 'Overloaded')]);
    assert.deepEqual(sent, ['first', 'fine']);
    assert.equal(sink.text(), anthropicAnswer.join(''));
  });

  test('OpenAI → OpenAI (passed through): a first chunk that is only a comment, then an overload: retried', async () => {
    const transport = new ScriptedStreams({
      busy: [': PROCESSING\n\n', data({ error: { message: 'The server is overloaded', type: 'server_error' } })],
      fine: [': PROCESSING\n\n', ...answer],
    });
    const sink = new MemorySink();
    await relayOver(transport, ['busy', 'fine']).handle(streamedRequest('openai-chat'), sink);
    assert.deepEqual(transport.sent, ['busy', 'fine']);
    assert.equal(sink.status, 200);
    assert.equal(sink.text(), `: PROCESSING\n\n${answer.join('')}`);
  });

  test('Responses (passed through): response.created and response.in_progress, then a rate limit: retried', async () => {
    const response = { id: 'resp_1', object: 'response', status: 'in_progress', output: [] };
    const opening = named({ type: 'response.created', response }) + named({ type: 'response.in_progress', response });
    const completed = named({ type: 'response.completed', response: { ...response, status: 'completed' } });
    const transport = new ScriptedStreams({
      limited: [opening, named({ type: 'error', code: 'rate_limit_exceeded', message: 'Slow down' })],
      fine: [opening, completed],
    });
    const sink = new MemorySink();
    await relayOfKind('openai-responses', transport, ['limited', 'fine']).handle(streamedRequest('openai-responses'), sink);
    assert.deepEqual(transport.sent, ['limited', 'fine']);
    assert.equal(sink.text(), opening + completed);
  });

  test('an upstream that closes after its opening is tried on the next provider too (nothing went out)', async () => {
    const { sent, sink } = await overAnthropic([messageStart]);
    assert.deepEqual(sent, ['first', 'fine']);
    assert.equal(sink.text(), anthropicAnswer.join(''));
  });

  test('once any of the answer went out, an error is forwarded, not retried', async () => {
    const { sent, sink } = await overAnthropic([messageStart, anthropicAnswer[2]!, anthropicError('overloaded_error', 'Overloaded')]);
    assert.deepEqual(sent, ['first']);
    assert.equal(sink.text(), messageStart + anthropicAnswer[2]! + anthropicError('overloaded_error', 'Overloaded'));
  });

  test("a passed-through OpenAI chat role chunk goes out at once (clients' time to first byte): an error after it is forwarded", async () => {
    const transport = new ScriptedStreams({
      flaky: [answer[0]!, data({ error: { message: 'Rate limit reached', type: 'rate_limit_error' } })],
      fine: answer,
    });
    const sink = new MemorySink();
    await relayOver(transport, ['flaky', 'fine']).handle(streamedRequest('openai-chat'), sink);
    assert.deepEqual(transport.sent, ['flaky']);
    assert.ok(sink.text().startsWith(answer[0]!));
    assert.match(sink.text(), /Rate limit reached/);
  });
});
