import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AttemptEndEvent, RequestEndEvent } from '@switchyard/core-routing';
import { eventually } from '@switchyard/test-support';
import type { Transport } from './providers/adapter.js';
import { Relay } from './relay.js';
import type { RelayCooldowns, RelayCredentialPool, RelayHealth } from './relayOptions.js';
import { MemorySink } from './sink.js';
import { LeavingSink } from './testing/leavingSink.js';
import { ANTHROPIC_OPENING_TOKENS, anthropicError, anthropicOpening, ScriptedStreams, SilentUpstream } from './testing/scriptedStreams.js';
import type { ApiFamily, ProviderConfig, RelayRequest } from './types.js';

// An upstream that answers 200 and streams some of its answer, then an error event: the client
// already has bytes, so its stream ends with the error, but the attempt must count as failed.

const openAiChunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const openAiError = (type: string, message: string) => `data: ${JSON.stringify({ error: { message, type } })}\n\n`;

interface Recorded {
  /** What the credential pool was told (Anthropic providers need a credential; OpenAI-compatible ones run without). */
  pool: { id: string; kind: string; tokens?: number }[];
  cooldowns: { key: string; kind: string; status?: number }[];
  health: { provider: string; ok: boolean }[];
  attempts: AttemptEndEvent[];
  ends: RequestEndEvent[];
}

const tokens = (usage?: { inputTokens: number; outputTokens: number }) => (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0);

/** `maxAttempts` 1 keeps a failure before the first byte from being tried on the spare provider. */
function relayOver(kind: ProviderConfig['kind'], transport: Transport, maxAttempts?: number): { relay: Relay; recorded: Recorded } {
  const recorded: Recorded = { pool: [], cooldowns: [], health: [], attempts: [], ends: [] };
  const pool = {
    acquire: () => ({ id: 'key-1', type: 'api_key' as const, token: 'sk-test' }),
    reportSuccess: (id: string, usage?: { inputTokens: number; outputTokens: number }) =>
      recorded.pool.push({ id, kind: 'success', tokens: tokens(usage) }),
    reportUsage: (id: string, usage?: { inputTokens: number; outputTokens: number }) =>
      recorded.pool.push({ id, kind: 'usage', tokens: tokens(usage) }),
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
    ...(maxAttempts !== undefined ? { maxAttempts } : {}),
    ...(kind === 'anthropic' ? { credentials: { pool: () => pool } } : {}),
  });
  relay.events.on('attempt:end', (e) => recorded.attempts.push(e));
  relay.events.on('request:end', (e) => recorded.ends.push(e));
  return { relay, recorded };
}

function streamed(ingress: ApiFamily, signal?: AbortSignal): RelayRequest {
  const body =
    ingress === 'anthropic-messages'
      ? { model: 'm', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }
      : { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] };
  return {
    requestId: 'req-1',
    ingress,
    model: 'm',
    stream: true,
    body,
    rawBody: Buffer.from(JSON.stringify(body)),
    ...(signal ? { signal } : {}),
  };
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
      [
        { id: 'key-1', kind: 'usage', tokens: ANTHROPIC_OPENING_TOKENS },
        { id: 'key-1', kind: 'error' },
      ],
      'the tokens used are counted, not as a success; the overload reaches the pool as it does before the first byte',
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
    // The tokens the broken stream used are the credential's (not a success, which would clear its failure streak);
    // then the rate limit cools it down.
    assert.deepEqual(recorded.pool, [
      { id: 'key-1', kind: 'usage', tokens: ANTHROPIC_OPENING_TOKENS },
      { id: 'key-1', kind: 'rate_limit' },
    ]);
    assert.deepEqual(recorded.cooldowns, [], 'the pool takes the rate limit, not the provider');
    assert.deepEqual(recorded.health, []);
    assert.equal(recorded.attempts[0]?.httpStatus, 429);
    assert.equal(recorded.ends[0]?.errorType, 'rate_limit');
  });
});

/** A reset connection and a body timeout, as undici reports them. */
const reset = () => Object.assign(new Error('other side closed'), { code: 'ECONNRESET' });
const bodyTimeout = () => Object.assign(new Error('Body Timeout Error'), { code: 'UND_ERR_BODY_TIMEOUT' });

describe('what the credential pool hears of a stream broken after its first byte', () => {
  const failures: { name: string; breaking: () => string | Error; pool: { id: string; kind: string }[] }[] = [
    {
      name: 'a rate-limit event (429)',
      breaking: () => anthropicError('rate_limit_error', 'Slow down'),
      pool: [{ id: 'key-1', kind: 'rate_limit' }],
    },
    {
      name: 'an overload event (529)',
      breaking: () => anthropicError('overloaded_error', 'Overloaded'),
      pool: [{ id: 'key-1', kind: 'error' }],
    },
    {
      name: 'a server-error event (500)',
      breaking: () => anthropicError('api_error', 'Internal error'),
      pool: [{ id: 'key-1', kind: 'error' }],
    },
    { name: 'a reset connection', breaking: reset, pool: [{ id: 'key-1', kind: 'error' }] },
    { name: 'a body timeout', breaking: bodyTimeout, pool: [{ id: 'key-1', kind: 'error' }] },
    { name: "an error of the request's own (a 4xx event)", breaking: () => anthropicError('invalid_request_error', 'bad field'), pool: [] },
  ];
  for (const failure of failures) {
    test(`${failure.name}: the failure it hears before the first byte, after the tokens, and no success`, async () => {
      const before = relayOver('anthropic', new ScriptedStreams({ up: [failure.breaking()] }), 1);
      await before.relay.handle(streamed('anthropic-messages'), new MemorySink());
      assert.deepEqual(before.recorded.pool, failure.pool, 'before the first byte');
      const after = relayOver('anthropic', new ScriptedStreams({ up: [...anthropicOpening, failure.breaking()] }), 1);
      const sink = new MemorySink();
      await after.relay.handle(streamed('anthropic-messages'), sink);
      assert.equal(sink.status, 200, 'the stream had started');
      assert.deepEqual(after.recorded.pool, [{ id: 'key-1', kind: 'usage', tokens: ANTHROPIC_OPENING_TOKENS }, ...failure.pool]);
    });
  }

  test('the client going away mid-stream is no failure of the credential: the pool hears only its tokens', async () => {
    const { relay, recorded } = relayOver('anthropic', new ScriptedStreams({ up: [...anthropicOpening] }), 1);
    const leave = new AbortController();
    const end = await relay.handle(streamed('anthropic-messages', leave.signal), new LeavingSink(leave));
    assert.equal(end.outcome, 'client_closed', 'the client left: no error of anyone here');
    assert.equal(end.errorType, 'client_closed');
    assert.equal(end.httpStatus, 200, 'the status the client got');
    assert.deepEqual(recorded.pool, [{ id: 'key-1', kind: 'usage', tokens: ANTHROPIC_OPENING_TOKENS }]);
    assert.deepEqual([recorded.cooldowns, recorded.health], [[], []], 'nothing against the provider');
    assert.deepEqual(
      recorded.attempts.map((a) => [a.outcome, a.errorType]),
      [['client_closed', 'client_closed']],
    );
  });
});

describe('the client closing the request before the first byte', () => {
  test('is client_closed: one attempt, no retry on the spare, nothing against the provider or the credential', async () => {
    const transport = new SilentUpstream();
    const { relay, recorded } = relayOver('anthropic', transport);
    const leave = new AbortController();
    const sink = new MemorySink();
    const handled = relay.handle(streamed('anthropic-messages', leave.signal), sink);
    await eventually('the attempt to go upstream', () => transport.sent.length === 1);
    leave.abort();
    sink.closed = true;
    const end = await handled;
    assert.deepEqual(transport.sent, ['up'], 'nobody is listening for another try');
    assert.deepEqual([recorded.pool, recorded.cooldowns, recorded.health], [[], [], []]);
    assert.deepEqual([end.outcome, end.errorType, end.httpStatus], ['client_closed', 'client_closed', 499]);
    assert.deepEqual(
      recorded.attempts.map((a) => [a.outcome, a.errorType]),
      [['client_closed', 'client_closed']],
    );
  });
});

describe('a quota error event tells the quota memory the upstream refused the credential', () => {
  /** One credential, held out once the upstream refused it for quota (as the credentials package's pool does). */
  const quotaPool = () => {
    let heldOut = false;
    const statusOf = (id: string) => ({ id, status: 'active', available: !heldOut, quota: { remaining: null, resets_at: null } });
    return {
      acquire: () => {
        if (heldOut) throw new Error('no credentials');
        return { id: 'key-1', type: 'api_key' as const, token: 'sk-test' };
      },
      reportSuccess() {},
      reportUsage() {},
      reportFailure: (_id: string, failure: { kind: string }) => {
        if (failure.kind === 'quota_exceeded') heldOut = true;
      },
      refresh: () => Promise.reject(new Error('not refreshable')),
      statusOf,
      status: () => [statusOf('key-1')],
    } satisfies RelayCredentialPool;
  };
  const quotaError = openAiError('insufficient_quota', 'You exceeded your current quota');

  for (const [when, script] of [
    ['before the first byte', [quotaError]],
    ['after the first byte', [openAiChunk('Hel'), quotaError]],
  ] as const) {
    test(`${when}: the next request hears 429 quota_exceeded, not 503 no_credentials`, async () => {
      const pool = quotaPool();
      const relay = new Relay({
        providers: [{ name: 'up', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/up', models: ['m'] }],
        transport: new ScriptedStreams({ up: script }),
        credentials: { pool: () => pool },
      });
      await relay.handle(streamed('openai-chat'), new MemorySink());
      const next = new MemorySink();
      await relay.handle(streamed('openai-chat'), next);
      assert.equal(next.status, 429, next.text());
      assert.equal(JSON.parse(next.text()).error.code, 'quota_exceeded');
    });
  }
});
