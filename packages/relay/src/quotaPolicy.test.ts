import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { type FakeBehaviour, type FakeOpenAi, type ReceivedRequest, startFakeOpenAi } from '@switchyard/test-support';
import type { QuotaExceededSettings } from './quotaPolicy.js';
import { Relay, type RelayCredentialPool } from './relay.js';
import { MemorySink } from './sink.js';
import type { RelayCredential, RelayRequest } from './types.js';
import { UndiciTransport } from './upstream.js';

const upstreams: FakeOpenAi[] = [];
const transports: UndiciTransport[] = [];
after(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
  await Promise.all(transports.map((t) => t.close()));
});

/** OpenAI's answer when an account's quota is gone. */
const QUOTA_429: FakeBehaviour = {
  type: 'status',
  status: 429,
  body: { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } },
};

const tokenOf = (r: ReceivedRequest) => String(r.headers.authorization ?? '').replace(/^Bearer /, '');

async function upstream(behaviour: (r: ReceivedRequest) => FakeBehaviour): Promise<FakeOpenAi> {
  const fake = await startFakeOpenAi({ behaviour: (r) => behaviour(r) });
  upstreams.push(fake);
  return fake;
}

let counter = 0;
function chat(model: string): RelayRequest {
  const body = { model, messages: [{ role: 'user', content: 'hello' }] };
  return { requestId: `q-${++counter}`, ingress: 'openai-chat', model, stream: false, body, rawBody: Buffer.from(JSON.stringify(body)) };
}

/**
 * A pool shaped like the credentials package's: a quota 429 holds a
 * credential out (a cooldown, status still `active`); the local token count
 * running out makes it `exhausted` until the reset.
 */
class QuotaPool implements RelayCredentialPool {
  heldOut = new Set<string>();
  spent = new Set<string>();
  failures: { id: string; kind: string }[] = [];
  private next = 0;
  constructor(private readonly credentials: RelayCredential[]) {}
  acquire(options?: { exclude?: ReadonlySet<string> }): RelayCredential {
    const usable = this.credentials.filter((c) => !options?.exclude?.has(c.id) && this.statusOf(c.id).available);
    if (usable.length === 0) throw new Error('no credentials');
    return usable[this.next++ % usable.length]!;
  }
  reportSuccess() {}
  reportUsage() {}
  reportFailure(id: string, failure: { kind: string }) {
    this.failures.push({ id, kind: failure.kind });
    if (failure.kind === 'quota_exceeded') this.heldOut.add(id);
  }
  async refresh(id: string): Promise<RelayCredential> {
    return this.peekById(id)!;
  }
  peekById(id: string) {
    return this.credentials.find((c) => c.id === id);
  }
  statusOf(id: string) {
    if (this.spent.has(id))
      return { id, status: 'exhausted', available: false, quota: { remaining: 0, resets_at: '2030-01-01T00:00:00.000Z' } };
    return { id, status: 'active', available: !this.heldOut.has(id), quota: { remaining: null, resets_at: null } };
  }
  status() {
    return this.credentials.map((c) => this.statusOf(c.id));
  }
}

function relayFor(fake: FakeOpenAi, pool: QuotaPool, quotaExceeded?: QuotaExceededSettings, previewModels: string[] = []) {
  const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
  transports.push(transport);
  return new Relay({
    providers: [{ name: 'up', kind: 'openai-compatible', baseUrl: fake.url, models: ['gpt-4o'], previewModels }],
    transport,
    credentials: { pool: (name) => (name === 'up' ? pool : undefined) },
    clock: new FakeScheduler(Date.parse('2029-12-31T23:00:00.000Z')),
    ...(quotaExceeded ? { quotaExceeded } : {}),
  });
}

const twoKeys = () =>
  new QuotaPool([
    { id: 'a', token: 'tok-a' },
    { id: 'b', token: 'tok-b' },
  ]);

describe('quota-exceeded.switch-project', () => {
  test('on (the default): a quota 429 rotates to the provider’s next credential; the client never sees it', async () => {
    const fake = await upstream((r) => (tokenOf(r) === 'tok-a' ? QUOTA_429 : { type: 'ok' }));
    const pool = twoKeys();
    const relay = relayFor(fake, pool);
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 200);
    assert.deepEqual(fake.requests.map(tokenOf), ['tok-a', 'tok-b']);
    assert.deepEqual(pool.failures, [{ id: 'a', kind: 'quota_exceeded' }]);
  });

  test('off: the quota 429 goes back to the client, no other credential is tried', async () => {
    const fake = await upstream((r) => (tokenOf(r) === 'tok-a' ? QUOTA_429 : { type: 'ok' }));
    const pool = twoKeys();
    const relay = relayFor(fake, pool, { switchCredential: false });
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 429);
    assert.equal(JSON.parse(sink.text()).error.code, 'quota_exceeded');
    assert.deepEqual(fake.requests.map(tokenOf), ['tok-a']);
    // The credential is still known to be out of quota.
    assert.deepEqual(pool.failures, [{ id: 'a', kind: 'quota_exceeded' }]);
    // The provider stays on it: the next request is refused here, while the pool holds it out.
    const next = new MemorySink();
    await relay.handle(chat('gpt-4o'), next);
    assert.equal(next.status, 429);
    assert.equal(fake.requests.length, 1);
  });

  test('off: once the local tracker counts the credential in use exhausted, requests get 429 until it resets, without calling upstream', async () => {
    const fake = await upstream(() => ({ type: 'ok' }));
    const pool = twoKeys();
    const relay = relayFor(fake, pool, { switchCredential: false });
    const first = new MemorySink();
    await relay.handle(chat('gpt-4o'), first);
    assert.equal(first.status, 200);
    const inUse = tokenOf(fake.requests[0]!) === 'tok-a' ? 'a' : 'b';
    pool.spent.add(inUse);
    const second = new MemorySink();
    await relay.handle(chat('gpt-4o'), second);
    assert.equal(second.status, 429);
    assert.equal(JSON.parse(second.text()).error.code, 'quota_exceeded');
    assert.equal(second.headers['retry-after'], '3600', 'Retry-After runs to the quota reset');
    assert.equal(fake.requests.length, 1);
    // Flipped on without a new relay: the other credential serves.
    relay.configure({ quotaExceeded: { switchCredential: true } });
    const third = new MemorySink();
    await relay.handle(chat('gpt-4o'), third);
    assert.equal(third.status, 200);
    assert.notEqual(tokenOf(fake.requests[1]!), `tok-${inUse}`);
  });

  test('every credential out of quota locally is a 429 quota_exceeded with Retry-After, not a 503', async () => {
    const fake = await upstream(() => ({ type: 'ok' }));
    const pool = twoKeys();
    pool.spent = new Set(['a', 'b']);
    const relay = relayFor(fake, pool, undefined, ['gpt-4o-preview']);
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 429);
    assert.equal(JSON.parse(sink.text()).error.code, 'quota_exceeded');
    assert.equal(sink.headers['retry-after'], '3600');
    assert.equal(fake.requests.length, 0, 'no preview retry either: the local count is per credential, whatever the model');
  });
});

describe('quota-exceeded.switch-preview-model', () => {
  const perModel = (r: ReceivedRequest): FakeBehaviour => (r.body?.model === 'gpt-4o' ? QUOTA_429 : { type: 'ok' });

  test('on: when every credential is out of quota, one retry with the first preview model answers, and says which model served', async () => {
    const fake = await upstream(perModel);
    const pool = twoKeys();
    const relay = relayFor(fake, pool, undefined, ['gpt-4o', 'gpt-4o-preview', 'other-preview']);
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 200);
    assert.equal(JSON.parse(sink.text()).model, 'gpt-4o-preview');
    assert.deepEqual(
      fake.requests.map((r) => r.body?.model),
      ['gpt-4o', 'gpt-4o', 'gpt-4o-preview'],
    );
    // On the credential the upstream refused last (the quota was the model's).
    assert.equal(tokenOf(fake.requests[2]!), tokenOf(fake.requests[1]!));
  });

  test('on, with switch-project off: the first quota 429 gets the preview retry on the same credential', async () => {
    const fake = await upstream(perModel);
    const relay = relayFor(fake, twoKeys(), { switchCredential: false, switchPreviewModel: true }, ['gpt-4o-preview']);
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 200);
    assert.deepEqual(
      fake.requests.map((r) => [r.body?.model, tokenOf(r)]),
      [
        ['gpt-4o', tokenOf(fake.requests[0]!)],
        ['gpt-4o-preview', tokenOf(fake.requests[0]!)],
      ],
    );
  });

  test('on: only once; a preview model out of quota too ends with the 429', async () => {
    const fake = await upstream(() => QUOTA_429);
    const relay = relayFor(fake, twoKeys(), undefined, ['p1', 'p2']);
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 429);
    assert.deepEqual(
      fake.requests.map((r) => r.body?.model),
      ['gpt-4o', 'gpt-4o', 'p1'],
    );
  });

  test('off: no retry with a preview model; flipped on through configure, the next request gets it on a credential the upstream refused', async () => {
    const fake = await upstream(perModel);
    const relay = relayFor(fake, twoKeys(), { switchPreviewModel: false }, ['gpt-4o-preview']);
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 429);
    assert.ok(fake.requests.every((r) => r.body?.model === 'gpt-4o'));
    relay.configure({ quotaExceeded: { switchPreviewModel: true } });
    const again = new MemorySink();
    await relay.handle(chat('gpt-4o'), again);
    assert.equal(again.status, 200);
    assert.equal(JSON.parse(again.text()).model, 'gpt-4o-preview');
  });

  test('a rate limit that is not about quota gets no preview retry', async () => {
    const fake = await upstream((r) => (r.body?.model === 'gpt-4o' ? { type: 'status', status: 429 } : { type: 'ok' }));
    const relay = relayFor(fake, twoKeys(), undefined, ['gpt-4o-preview']);
    const sink = new MemorySink();
    await relay.handle(chat('gpt-4o'), sink);
    assert.equal(sink.status, 429);
    assert.ok(fake.requests.every((r) => r.body?.model === 'gpt-4o'));
  });
});
