import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import type { RequestEndEvent } from '@switchyard/core-routing';
import { FakeScheduler } from '@switchyard/runtime';
import { type FakeBehaviour, type FakeOpenAi, startFakeOpenAi } from '@switchyard/test-support';
import { Relay, type RelayCooldowns, type RelayCredentialPool } from './relay.js';
import { ResponseCache } from './responseCache.js';
import { MemorySink } from './sink.js';
import type { ProviderConfig, RelayCredential, RelayRequest } from './types.js';
import { UndiciTransport } from './upstream.js';

const upstreams: FakeOpenAi[] = [];
const transports: UndiciTransport[] = [];
after(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
  await Promise.all(transports.map((t) => t.close()));
});

async function upstream(behaviour?: (n: number) => FakeBehaviour): Promise<FakeOpenAi> {
  const fake = await startFakeOpenAi(behaviour ? { behaviour: (_r, n) => behaviour(n) } : {});
  upstreams.push(fake);
  return fake;
}

function transport(requestTimeoutMs = 5_000): UndiciTransport {
  const t = new UndiciTransport({ requestTimeoutMs });
  transports.push(t);
  return t;
}

let counter = 0;
function chat(model: string, extra: Record<string, unknown> = {}, overrides: Partial<RelayRequest> = {}): RelayRequest {
  const body: Record<string, unknown> = { model, messages: [{ role: 'user', content: 'hello there' }], ...extra };
  return {
    requestId: `req-${++counter}`,
    ingress: 'openai-chat',
    model,
    stream: body.stream === true,
    body,
    rawBody: Buffer.from(JSON.stringify(body)),
    ...overrides,
  };
}

const compatible = (name: string, fake: FakeOpenAi, more: Partial<ProviderConfig> = {}): ProviderConfig => ({
  name,
  kind: 'openai-compatible',
  baseUrl: fake.url,
  models: ['gpt-4o'],
  ...more,
});

/** Records what the relay reports, for assertions. */
class RecordingCooldowns implements RelayCooldowns {
  failures: { key: string; kind: string }[] = [];
  successes: string[] = [];
  recordFailure(key: string, failure: { kind: 'rate_limit' | 'error' }) {
    this.failures.push({ key, kind: failure.kind });
  }
  recordSuccess(key: string) {
    this.successes.push(key);
  }
}

/** A small credential pool for the relay's contract: per-credential cooldown after `threshold` 429s. */
class TestPool implements RelayCredentialPool {
  coolingUntil = new Map<string, number>();
  strikes = new Map<string, number>();
  refreshed: string[] = [];
  used: string[] = [];
  usage: { id: string; inputTokens: number; outputTokens: number }[] = [];
  private next = 0;
  constructor(
    private readonly credentials: RelayCredential[],
    private readonly clock: { now(): number },
    private readonly threshold = 2,
  ) {}
  acquire(options?: { exclude?: ReadonlySet<string> }): RelayCredential {
    const usable = this.credentials.filter((c) => !options?.exclude?.has(c.id) && (this.coolingUntil.get(c.id) ?? 0) <= this.clock.now());
    if (usable.length === 0) throw new Error('no credentials');
    const credential = usable[this.next++ % usable.length]!;
    this.used.push(credential.id);
    return credential;
  }
  reportSuccess(id: string, usage?: { inputTokens: number; outputTokens: number }) {
    this.reportUsage(id, usage);
  }
  reportUsage(id: string, usage?: { inputTokens: number; outputTokens: number }) {
    if (usage) this.usage.push({ id, ...usage });
  }
  reportFailure(id: string, failure: { kind: string }) {
    if (failure.kind !== 'rate_limit') return;
    const strikes = (this.strikes.get(id) ?? 0) + 1;
    this.strikes.set(id, strikes);
    if (strikes >= this.threshold) this.coolingUntil.set(id, this.clock.now() + 60_000);
  }
  async refresh(id: string): Promise<RelayCredential> {
    this.refreshed.push(id);
    const fresh = { id, token: `${id}-refreshed`, type: 'oauth' as const };
    const index = this.credentials.findIndex((c) => c.id === id);
    this.credentials[index] = fresh;
    return fresh;
  }
}

describe('Relay: routing and pass-through', () => {
  test('the mock provider answers in process, with usage and the request id', async () => {
    const relay = new Relay({ providers: [{ name: 'demo', kind: 'mock', models: ['demo-model'] }] });
    const ends: RequestEndEvent[] = [];
    relay.events.on('request:end', (e) => ends.push(e));
    const sink = new MemorySink();
    await relay.handle(chat('demo-model'), sink);
    assert.equal(sink.status, 200);
    const body = JSON.parse(sink.text());
    assert.match(body.choices[0].message.content, /mock provider.*You said: hello there/);
    assert.equal(sink.headers['x-switchyard-provider'], 'demo');
    assert.equal(ends[0]?.outcome, 'success');
    assert.ok((ends[0]?.tokens.input ?? 0) > 0);
  });

  test('a 200 whose JSON is broken is an upstream failure, never passed on; a valid answer reports its top-level usage', async () => {
    let broken = true;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // The broken answer is cut off; the good one nests a decoy usage before the real one.
      res.end(
        broken
          ? '{"id":"x","usage":{"prompt_tokens":3,"completion_tokens":4}'
          : '{"id":"y","choices":[{"usage":{"prompt_tokens":99}}],"usage":{"prompt_tokens":3,"completion_tokens":4}}',
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const relay = new Relay({
      providers: [{ name: 'raw', kind: 'openai-compatible', baseUrl: url, models: ['gpt-4o'] }],
      transport: transport(),
      maxAttempts: 1,
    });
    const ends: RequestEndEvent[] = [];
    relay.events.on('request:end', (e) => ends.push(e));
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.notEqual(sink.status, 200);
    assert.ok(!sink.text().includes('"id":"x"'), 'the broken body is not passed on');
    assert.equal(ends[0]?.outcome, 'error');
    broken = false;
    const good = new MemorySink();
    await relay.handle(chat('gpt-4o'), good);
    assert.equal(good.status, 200);
    assert.deepEqual(ends[1]?.tokens, { input: 3, output: 4 });
  });

  test('the client body reaches the upstream unchanged; an alias renames only the model', async () => {
    const fake = await upstream();
    const relay = new Relay({ providers: [compatible('up', fake, { aliases: { fast: 'gpt-4o-mini' } })], transport: transport() });
    await relay.handle(chat('gpt-4o', { temperature: 0.2 }), new MemorySink());
    assert.deepEqual(fake.requests.at(-1)?.body, {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello there' }],
      temperature: 0.2,
    });
    await relay.handle(chat('fast'), new MemorySink());
    assert.equal(fake.requests.at(-1)?.body?.model, 'gpt-4o-mini');
  });

  test('a stream passes through event by event; usage is counted and the usage chunk hidden unless asked for', async () => {
    const fake = await upstream();
    const relay = new Relay({ providers: [compatible('up', fake)], transport: transport() });
    const ends: RequestEndEvent[] = [];
    relay.events.on('request:end', (e) => ends.push(e));
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o', { stream: true }), sink);
    assert.equal(sink.headers['content-type'], 'text/event-stream; charset=utf-8');
    const events = sink.text().split('\n\n').filter(Boolean);
    assert.equal(events.at(-1), 'data: [DONE]');
    assert.ok(!sink.text().includes('"usage"'), 'the client did not ask for usage');
    assert.deepEqual(fake.requests.at(-1)?.body?.stream_options, { include_usage: true });
    assert.deepEqual(ends.at(-1)?.tokens, { input: 11, output: 7 });
    const asked = new MemorySink();
    await relay.handle(chat('gpt-4o', { stream: true, stream_options: { include_usage: true } }), asked);
    assert.ok(asked.text().includes('"usage"'));
  });

  test('an unknown model is a 404 model_not_found naming the model', async () => {
    const relay = new Relay({ providers: [{ name: 'demo', kind: 'mock', models: ['demo-model'] }] });
    const sink = new MemorySink();
    await relay.handle(chat('nope'), sink);
    assert.equal(sink.status, 404);
    assert.deepEqual(JSON.parse(sink.text()).error.code, 'model_not_found');
  });

  test('a client error from the upstream goes back as it came, without a retry', async () => {
    const fake = await upstream(() => ({
      type: 'status',
      status: 400,
      body: { error: { message: 'bad temperature', type: 'invalid_request_error', param: 'temperature', code: null } },
    }));
    const other = await upstream();
    const relay = new Relay({ providers: [compatible('a', fake), compatible('b', other)], transport: transport() });
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 400);
    assert.equal(JSON.parse(sink.text()).error.param, 'temperature');
    assert.equal(other.chatCount, 0);
  });
});

describe('Relay: retries and failover before the first byte', () => {
  for (const [label, failing] of [
    ['a 429', { type: 'status', status: 429, headers: { 'retry-after': '7' } }],
    ['a 503', { type: 'status', status: 503 }],
    ['a reset connection', { type: 'reset' }],
  ] as [string, FakeBehaviour][]) {
    test(`${label} is retried on another provider and recorded against the failing one`, async () => {
      const bad = await upstream(() => failing);
      const good = await upstream();
      const cooldowns = new RecordingCooldowns();
      const relay = new Relay({ providers: [compatible('bad', bad), compatible('good', good)], transport: transport(), cooldowns });
      const ends: RequestEndEvent[] = [];
      relay.events.on('request:end', (e) => ends.push(e));
      for (let i = 0; i < 4; i++) {
        const sink = new MemorySink();
        await relay.handle(chat('gpt-4o'), sink);
        assert.equal(sink.status, 200, sink.text());
      }
      assert.ok(cooldowns.failures.some((f) => f.key === 'bad'));
      assert.ok(ends.some((e) => e.attempts === 2));
    });
  }

  test('a timeout is retried elsewhere', async () => {
    const slow = await upstream(() => ({ type: 'hang' }));
    const good = await upstream();
    const relay = new Relay({
      providers: [compatible('slow', slow), compatible('good', good)],
      transport: transport(300),
      strategy: 'priority',
    });
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 200);
  });

  test('a stream cut before its first event is retried; the client sees one clean stream', async () => {
    const cut = await upstream(() => ({ type: 'cut', afterChunks: 0 }));
    const good = await upstream();
    const relay = new Relay({
      providers: [compatible('cut', cut, { priority: 0 }), compatible('good', good, { priority: 1 })],
      strategy: 'priority',
      transport: transport(),
    });
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o', { stream: true }), sink);
    assert.equal(sink.status, 200);
    assert.ok(sink.text().endsWith('data: [DONE]\n\n'));
    assert.ok(!sink.text().includes('"choi\n'), 'no partial event');
  });

  test('a stream cut after its first byte ends with a clean error event, not a retry', async () => {
    const cut = await upstream(() => ({ type: 'cut', afterChunks: 2 }));
    const good = await upstream();
    const relay = new Relay({
      providers: [compatible('cut', cut, { priority: 0 }), compatible('good', good, { priority: 1 })],
      strategy: 'priority',
      transport: transport(),
    });
    const sink = new MemorySink();
    const end = await relay.handle(chat('gpt-4o', { stream: true }), sink);
    const events = sink.text().split('\n\n').filter(Boolean);
    assert.equal(good.chatCount, 0);
    assert.equal(end.outcome, 'error');
    for (const event of events) JSON.parse(event.slice(6)); // every event is whole JSON
    assert.equal(JSON.parse(events.at(-1)!.slice(6)).error.code, 'upstream_error');
  });

  test('upstream 5xx everywhere is a 502 upstream_error carrying the upstream status, never a 500', async () => {
    const a = await upstream(() => ({ type: 'status', status: 500 }));
    const b = await upstream(() => ({ type: 'status', status: 500 }));
    const relay = new Relay({ providers: [compatible('a', a), compatible('b', b)], transport: transport() });
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 502);
    const error = JSON.parse(sink.text()).error;
    assert.equal(error.code, 'upstream_error');
    assert.equal(error.upstream_status, 500);
  });

  test('every provider cooling down is a 429 with Retry-After to the earliest return', async () => {
    const clock = new FakeScheduler(1_000_000);
    const relay = new Relay({
      providers: [
        { name: 'm1', kind: 'mock', models: ['x'] },
        { name: 'm2', kind: 'mock', models: ['x'] },
      ],
      clock,
    });
    relay.table.route('x');
    relay.table.markUnavailable('m1', 'cooldown', clock.now() + 42_000);
    relay.table.markUnavailable('m2', 'cooldown', clock.now() + 90_000);
    const sink = new MemorySink();
    await relay.handle(chat('x'), sink);
    assert.equal(sink.status, 429);
    assert.equal(sink.headers['retry-after'], '42');
    assert.equal(JSON.parse(sink.text()).error.code, 'all_providers_in_cooldown');
  });
});

describe('Relay: credentials', () => {
  test('one credential always 429 and another 200: no client-visible failure over 500 requests; the bad one is left alone once cooling', async () => {
    const clock = new FakeScheduler(0);
    const fake = await upstream();
    fake.setBehaviour((request) =>
      request.headers.authorization === 'Bearer key-bad'
        ? { type: 'status', status: 429, headers: { 'retry-after': '30' } }
        : { type: 'ok' },
    );
    const pool = new TestPool(
      [
        { id: 'bad', token: 'key-bad' },
        { id: 'good', token: 'key-good' },
      ],
      clock,
    );
    const relay = new Relay({
      providers: [{ name: 'up', kind: 'openai', baseUrl: fake.url, models: ['gpt-4o'] }],
      transport: transport(),
      credentials: { pool: () => pool },
      clock,
    });
    let failures = 0;
    for (let i = 0; i < 500; i++) {
      const sink = new MemorySink();
      await relay.handle(chat('gpt-4o'), sink);
      if (sink.status !== 200) failures++;
    }
    assert.equal(failures, 0);
    const badUses = pool.used.filter((id) => id === 'bad').length;
    assert.equal(badUses, 2, 'after the threshold (2) the 429 credential got no more traffic');
    await clock.advance(61_000);
    await relay.handle(chat('gpt-4o'), new MemorySink());
    await relay.handle(chat('gpt-4o'), new MemorySink());
    assert.equal(pool.used.filter((id) => id === 'bad').length, 3, 'after its cooldown it is tried again');
    assert.ok(pool.usage.every((u) => u.id === 'good' && u.inputTokens === 11 && u.outputTokens === 7));
  });

  test('a 401 on an OAuth credential refreshes it once and retries with the new token', async () => {
    const fake = await upstream();
    fake.setBehaviour((request) => (request.headers.authorization === 'Bearer old' ? { type: 'status', status: 401 } : { type: 'ok' }));
    const pool = new TestPool([{ id: 'c1', token: 'old', type: 'oauth' }], { now: () => 0 });
    const relay = new Relay({
      providers: [{ name: 'up', kind: 'openai', baseUrl: fake.url, models: ['gpt-4o'] }],
      transport: transport(),
      credentials: { pool: () => pool },
    });
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 200);
    assert.deepEqual(pool.refreshed, ['c1']);
    assert.equal(fake.requests.at(-1)?.headers.authorization, 'Bearer c1-refreshed');
  });

  test('checking whether a provider has any credential left does not count a pick', async () => {
    const fake = await upstream();
    fake.setBehaviour(() => ({ type: 'status', status: 500 }));
    class PeekablePool extends TestPool {
      peeks = 0;
      peek() {
        this.peeks++;
        return { id: 'a', token: 'key-a' };
      }
    }
    const pool = new PeekablePool(
      [
        { id: 'a', token: 'key-a' },
        { id: 'b', token: 'key-b' },
      ],
      { now: () => 0 },
    );
    const relay = new Relay({
      providers: [{ name: 'up', kind: 'openai', baseUrl: fake.url, models: ['gpt-4o'] }],
      transport: transport(),
      credentials: { pool: () => pool },
      maxAttempts: 4,
    });
    await relay.handle(chat('gpt-4o'), new MemorySink());
    assert.ok(pool.peeks >= 1, 'the relay asked whether any credential was left');
    assert.equal(pool.used.length, fake.chatCount, 'every counted pick was a call upstream');
  });

  test('a provider without usable credentials answers 503 no_credentials', async () => {
    const fake = await upstream();
    const pool = new TestPool([], { now: () => 0 });
    const relay = new Relay({
      providers: [{ name: 'up', kind: 'openai', baseUrl: fake.url, models: ['gpt-4o'] }],
      transport: transport(),
      credentials: { pool: () => pool },
    });
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 503);
    assert.equal(JSON.parse(sink.text()).error.code, 'no_credentials');
    assert.equal(fake.chatCount, 0);
  });
});

describe('Relay: response cache', () => {
  const scoped = (body: Record<string, unknown>, scope: string, overrides: Partial<RelayRequest> = {}): RelayRequest => ({
    ...chat('gpt-4o'),
    body,
    stream: body.stream === true,
    rawBody: Buffer.from(JSON.stringify(body)),
    cacheScope: scope,
    ...overrides,
  });

  test('identical requests are served from the cache, whatever their key order; errors and streams are not cached', async () => {
    const fake = await upstream();
    const cache = new ResponseCache({ enabled: true });
    const relay = new Relay({ providers: [compatible('up', fake)], transport: transport(), cache });
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'cache me' }], temperature: 0 };
    const reordered = { temperature: 0, messages: [{ content: 'cache me', role: 'user' }], model: 'gpt-4o' };
    const first = new MemorySink();
    await relay.handle(scoped(body, 'sk-a'), first);
    const second = new MemorySink();
    await relay.handle(scoped(reordered, 'sk-a'), second);
    assert.equal(fake.chatCount, 1);
    assert.equal(second.headers['x-switchyard-cache'], 'hit');
    assert.equal(second.text(), first.text());
    await relay.handle(scoped(body, 'sk-a', { noCache: true }), new MemorySink());
    assert.equal(fake.chatCount, 2, 'opt-out per request');
    const streamed = { ...body, stream: true };
    await relay.handle(scoped(streamed, 'sk-a'), new MemorySink());
    await relay.handle(scoped(streamed, 'sk-a'), new MemorySink());
    assert.equal(fake.chatCount, 4, 'streams are not cached');
    fake.setBehaviour(() => ({ type: 'status', status: 400 }));
    const errorBody = { model: 'gpt-4o', messages: [{ role: 'user', content: 'error' }], temperature: 0 };
    await relay.handle(scoped(errorBody, 'sk-a'), new MemorySink());
    await relay.handle(scoped(errorBody, 'sk-a'), new MemorySink());
    assert.equal(fake.chatCount, 6, 'errors are not cached');
    const stats = cache.stats();
    assert.equal(stats.hits, 1);
    assert.ok(stats.hit_rate > 0 && stats.hit_rate < 1);
  });

  test("a client is never answered from another client's entry; a request without a scope is never cached", async () => {
    const fake = await upstream((n) => ({ type: 'ok', content: `answer ${n}` }));
    const relay = new Relay({ providers: [compatible('up', fake)], transport: transport(), cache: new ResponseCache({ enabled: true }) });
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'same' }], temperature: 0 };
    const texts: string[] = [];
    for (const scope of ['sk-a', 'sk-b', 'sk-a', 'sk-b']) {
      const sink = new MemorySink();
      await relay.handle(scoped(body, scope), sink);
      texts.push(sink.text());
    }
    assert.equal(fake.chatCount, 2, 'one upstream call per client');
    assert.notEqual(texts[0], texts[1], 'the second client got its own answer');
    assert.equal(texts[2], texts[0]);
    assert.equal(texts[3], texts[1]);
    const { cacheScope: _, ...unscoped } = scoped(body, 'sk-a');
    await relay.handle(unscoped, new MemorySink());
    assert.equal(fake.chatCount, 3);
  });

  test('sampled requests are cached only with `sampled`, streams only with `streaming` (replayed whole)', async () => {
    const fake = await upstream((n) => ({ type: 'ok', content: `answer ${n}`, chunks: 3 }));
    const cache = new ResponseCache({ enabled: true });
    const relay = new Relay({ providers: [compatible('up', fake)], transport: transport(), cache });
    const sampled = { model: 'gpt-4o', messages: [{ role: 'user', content: 'sample' }], temperature: 1 };
    const unset = { model: 'gpt-4o', messages: [{ role: 'user', content: 'no temperature' }] };
    for (const body of [sampled, sampled, unset, unset]) await relay.handle(scoped(body, 'sk-a'), new MemorySink());
    assert.equal(fake.chatCount, 4, 'a sample is not replayed by default (no temperature means the provider samples)');
    cache.configure({ enabled: true, sampled: true, streaming: true });
    for (const body of [sampled, sampled]) await relay.handle(scoped(body, 'sk-a'), new MemorySink());
    assert.equal(fake.chatCount, 5, 'with sampled: true it is');
    const streamed = { model: 'gpt-4o', messages: [{ role: 'user', content: 'stream' }], temperature: 0, stream: true };
    const first = new MemorySink();
    await relay.handle(scoped(streamed, 'sk-a'), first);
    const again = new MemorySink();
    const end = await relay.handle(scoped(streamed, 'sk-a'), again);
    assert.equal(fake.chatCount, 6, 'the stream was cached');
    assert.equal(end.cached, true);
    assert.equal(again.text(), first.text());
    assert.match(again.text(), /\[DONE\]/);
    assert.match(again.headers['content-type'] ?? '', /text\/event-stream/);
  });

  test('with the cache off, no key is computed', async () => {
    const fake = await upstream();
    let keys = 0;
    class CountingCache extends ResponseCache {
      override key(ingress: string, body: Record<string, unknown>, scope?: string) {
        keys++;
        return super.key(ingress, body, scope);
      }
    }
    const cache = new CountingCache();
    const relay = new Relay({ providers: [compatible('up', fake)], transport: transport(), cache });
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], temperature: 0 };
    await relay.handle(scoped(body, 'sk-a'), new MemorySink());
    await relay.handle(scoped(body, 'sk-a'), new MemorySink());
    assert.equal(fake.chatCount, 2);
    assert.equal(keys, 0);
    cache.configure({ enabled: true });
    await relay.handle(scoped(body, 'sk-a'), new MemorySink());
    assert.equal(keys, 1, 'the count is live');
  });
});

test('a client that goes away aborts the upstream call', async () => {
  const fake = await upstream(() => ({ type: 'ok', chunks: 50, chunkDelayMs: 20 }));
  const relay = new Relay({ providers: [compatible('up', fake)], transport: transport() });
  const controller = new AbortController();
  const sink = new MemorySink();
  const handled = relay.handle(chat('gpt-4o', { stream: true }, { signal: controller.signal }), sink);
  setTimeout(() => {
    controller.abort();
    sink.closed = true;
  }, 100);
  const end = await handled;
  assert.equal(end.outcome, 'client_closed');
  assert.ok(!sink.text().includes('[DONE]'));
});

describe('Relay with CooldownManager and HealthMonitor', () => {
  test('429s past the threshold cool a provider; the relay routes around it, then reports all cooling with Retry-After', async () => {
    const { CooldownManager } = await import('@switchyard/core-routing');
    const clock = new FakeScheduler(1_000_000);
    const limited = await upstream(() => ({ type: 'status', status: 429, headers: { 'retry-after': '120' } }));
    const good = await upstream();
    const cooldowns = new CooldownManager({
      scheduler: clock,
      detection: { windowMs: 60_000, errorThreshold: 3 },
      defaultDurations: { rateLimitMs: 60_000 },
    });
    const relay = new Relay({
      providers: [compatible('limited', limited), compatible('good', good)],
      transport: transport(),
      cooldowns,
      clock,
    });
    for (let i = 0; i < 20; i++) {
      const sink = new MemorySink();
      await relay.handle(chat('gpt-4o'), sink);
      assert.equal(sink.status, 200);
    }
    assert.equal(limited.chatCount, 3, 'no traffic to the provider once it is cooling');
    assert.ok(cooldowns.isCooling('limited'));
    cooldowns.cooldown('good', 30_000);
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 429);
    assert.equal(sink.headers['retry-after'], '30');
    cooldowns.recover('good');
    const again = new MemorySink();
    await relay.handle(chat('gpt-4o'), again);
    assert.equal(again.status, 200);
    relay.close();
  });

  test('an unhealthy provider is held out until it is healthy again', async () => {
    const { HealthMonitor } = await import('@switchyard/core-routing');
    const clock = new FakeScheduler(0);
    const a = await upstream();
    const b = await upstream();
    let aUp = false;
    const health = new HealthMonitor({
      scheduler: clock,
      providers: ['a', 'b'],
      settings: { unhealthyThreshold: 1, healthyThreshold: 1 },
      probe: async (provider) => {
        if (provider === 'a' && !aUp) throw new Error('down');
      },
    });
    await health.checkAll();
    const relay = new Relay({ providers: [compatible('a', a), compatible('b', b)], transport: transport(), health, clock });
    for (let i = 0; i < 6; i++) await relay.handle(chat('gpt-4o'), new MemorySink());
    assert.equal(a.chatCount, 0);
    aUp = true;
    await health.checkAll();
    for (let i = 0; i < 6; i++) await relay.handle(chat('gpt-4o'), new MemorySink());
    assert.equal(a.chatCount, 3);
    relay.close();
  });
});
