import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  eventually,
  FAKE_USAGE,
  type FakeBehaviour,
  type FakeOpenAi,
  type ReceivedRequest,
  startFakeOpenAi,
} from '@switchyard/test-support';
import { Relay, type RelayCredentialPool } from './relay.js';
import type { RelayAdmission } from './relayOptions.js';
import { MemorySink } from './sink.js';
import { LeavingSink } from './testing/leavingSink.js';
import { ANTHROPIC_OPENING_TOKENS, anthropicError, anthropicOpening, ScriptedStreams, SilentUpstream } from './testing/scriptedStreams.js';
import type { RelayCredential, RelayRequest } from './types.js';
import { UndiciTransport } from './upstream.js';

const upstreams: FakeOpenAi[] = [];
const transports: UndiciTransport[] = [];
after(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
  await Promise.all(transports.map((t) => t.close()));
});

const tokenOf = (r: ReceivedRequest) => String(r.headers.authorization ?? '').replace(/^Bearer /, '');

/**
 * A pool with cluster-mode admission: `room` says which credentials the
 * shared quota still admits; it records how each reservation was settled.
 */
class AdmittingPool implements RelayCredentialPool {
  room = new Set<string>();
  /** reservation → how it ended: `success:<tokens>`, `usage:<tokens>` or `released`. */
  settled = new Map<string, string>();
  /** Every settlement asked for, in order, as `<reservation> <how>`: those after the first included. */
  settlements: string[] = [];
  /** The failures reported, as `<credential> <kind>`. */
  failures: string[] = [];
  admitted: string[] = [];
  estimates: number[] = [];
  private next = 0;
  constructor(private readonly credentials: RelayCredential[]) {}
  acquire(options?: { exclude?: ReadonlySet<string> }): RelayCredential {
    const usable = this.credentials.filter((c) => !options?.exclude?.has(c.id));
    if (usable.length === 0) throw new Error('no credentials');
    return usable[this.next++ % usable.length]!;
  }
  admit(id: string, estimatedTokens?: number): Promise<RelayAdmission> {
    this.estimates.push(estimatedTokens ?? -1);
    if (!this.room.has(id)) return Promise.resolve({ admitted: false, used: 40, reserved: 60, limit: 100 });
    const reservation = `${id}-${this.admitted.length + 1}`;
    this.admitted.push(reservation);
    return Promise.resolve({ admitted: true, reservation });
  }
  reportSuccess(_id: string, usage?: { inputTokens: number; outputTokens: number }, reservation?: string) {
    if (reservation) this.settle(reservation, `success:${(usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0)}`);
  }
  reportUsage(_id: string, usage?: { inputTokens: number; outputTokens: number }, reservation?: string) {
    if (reservation) this.settle(reservation, `usage:${(usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0)}`);
  }
  release(_id: string, reservation: string) {
    this.settle(reservation, 'released');
  }
  private settle(reservation: string, how: string) {
    this.settlements.push(`${reservation} ${how}`);
    if (!this.settled.has(reservation)) this.settled.set(reservation, how);
  }
  reportFailure(id: string, failure: { kind: string }) {
    this.failures.push(`${id} ${failure.kind}`);
  }
  async refresh(id: string): Promise<RelayCredential> {
    return this.credentials.find((c) => c.id === id)!;
  }
  statusOf(id: string) {
    return { id, status: 'active', available: true, quota: { remaining: 60, resets_at: '2030-01-01T00:00:00.000Z' } };
  }
  status() {
    return this.credentials.map((c) => this.statusOf(c.id));
  }
}

async function relayWith(behaviour: (r: ReceivedRequest) => FakeBehaviour, pool: AdmittingPool) {
  const fake = await startFakeOpenAi({ behaviour });
  upstreams.push(fake);
  const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
  transports.push(transport);
  const relay = new Relay({
    providers: [{ name: 'up', kind: 'openai-compatible', baseUrl: fake.url, models: ['gpt-4o'] }],
    transport,
    credentials: { pool: (name) => (name === 'up' ? pool : undefined) },
  });
  return { fake, relay };
}

let counter = 0;
function chat(stream = false): RelayRequest {
  const body = { model: 'gpt-4o', stream, messages: [{ role: 'user', content: 'hello' }] };
  return {
    requestId: `adm-${++counter}`,
    ingress: 'openai-chat',
    model: 'gpt-4o',
    stream,
    body,
    rawBody: Buffer.from(JSON.stringify(body)),
  };
}

const keys = () =>
  new AdmittingPool([
    { id: 'a', token: 'tok-a' },
    { id: 'b', token: 'tok-b' },
  ]);
const perRequest = FAKE_USAGE.input + FAKE_USAGE.output;

describe('relay admission against a shared quota (cluster mode)', () => {
  test('a credential the shared quota refuses is left for the request; the next one serves, and its usage settles its reservation', async () => {
    const pool = keys();
    pool.room.add('b');
    const { fake, relay } = await relayWith(() => ({ type: 'ok' }), pool);
    const sink = new MemorySink();
    const request = chat();
    const end = await relay.handle(request, sink);
    assert.equal(sink.status, 200);
    assert.deepEqual(fake.requests.map(tokenOf), ['tok-b'], 'nothing went upstream on the refused credential');
    assert.equal(end.attempts, 1, 'a refusal is not an attempt');
    const estimate = Math.ceil(request.rawBody.length / 4);
    assert.deepEqual(pool.estimates, [estimate, estimate], 'each admission carries a floor estimated from the body');
    assert.deepEqual([...pool.settled], [['b-1', `success:${perRequest}`]]);
  });

  test('every credential refused: 429 quota_exceeded with a short Retry-After, and no upstream call', async () => {
    const pool = keys();
    const { fake, relay } = await relayWith(() => ({ type: 'ok' }), pool);
    const sink = new MemorySink();
    await relay.handle(chat(), sink);
    assert.equal(sink.status, 429);
    assert.equal(sink.headers['retry-after'], '1', 'room held by requests in flight comes back as they finish');
    const error = JSON.parse(sink.text()).error;
    assert.equal(error.code, 'quota_exceeded');
    assert.match(error.message, /40 used and 60 held by requests in flight, of 100/);
    assert.equal(fake.requests.length, 0);
  });

  test('an attempt that fails upstream lets its reservation go before the next credential is tried', async () => {
    const pool = keys();
    pool.room.add('a').add('b');
    const { relay } = await relayWith((r) => (tokenOf(r) === 'tok-a' ? { type: 'status', status: 500 } : { type: 'ok' }), pool);
    const sink = new MemorySink();
    await relay.handle(chat(), sink);
    assert.equal(sink.status, 200);
    assert.deepEqual(
      [...pool.settled],
      [
        ['a-1', 'released'],
        ['b-2', `success:${perRequest}`],
      ],
    );
  });

  test('a client error and a stream cut before its usage both let the reservation go', async () => {
    const pool = keys();
    pool.room.add('a');
    const cut = await relayWith(() => ({ type: 'cut', afterChunks: 1 }), pool);
    const streamed = new MemorySink();
    await cut.relay.handle(chat(true), streamed);
    assert.equal(streamed.status, 200);
    const bad = await relayWith(() => ({ type: 'status', status: 400, body: { error: { message: 'bad' } } }), pool);
    const refused = new MemorySink();
    await bad.relay.handle(chat(), refused);
    assert.equal(refused.status, 400);
    assert.equal(pool.admitted.length, 2);
    for (const reservation of pool.admitted) assert.equal(pool.settled.get(reservation), 'released', reservation);
  });

  test('a stream broken by a rate limit after its first byte settles its reservation once, with its tokens, and is no success', async () => {
    const pool = keys();
    pool.room.add('a');
    const relay = new Relay({
      providers: [{ name: 'up', kind: 'anthropic', baseUrl: 'http://127.0.0.1:1/up', models: ['m'] }],
      transport: new ScriptedStreams({ up: [...anthropicOpening, anthropicError('rate_limit_error', 'Slow down')] }),
      credentials: { pool: () => pool },
    });
    const body = { model: 'm', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const sink = new MemorySink();
    await relay.handle(
      {
        requestId: 'adm-broken',
        ingress: 'anthropic-messages',
        model: 'm',
        stream: true,
        body,
        rawBody: Buffer.from(JSON.stringify(body)),
      },
      sink,
    );
    assert.equal(sink.status, 200);
    assert.deepEqual(pool.settlements, [`a-1 usage:${ANTHROPIC_OPENING_TOKENS}`]);
    assert.deepEqual(pool.failures, ['a rate_limit']);
  });

  test('a client that closes its request: released once before the first byte, settled once with its tokens after; nothing else tried, no failure', async () => {
    const pool = keys();
    pool.room.add('a').add('b');
    const relayOver = (transport: ScriptedStreams | SilentUpstream) =>
      new Relay({
        providers: [{ name: 'up', kind: 'anthropic', baseUrl: 'http://127.0.0.1:1/up', models: ['m'] }],
        transport,
        credentials: { pool: () => pool },
      });
    const body = { model: 'm', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const streamed = (requestId: string, signal: AbortSignal): RelayRequest => ({
      requestId,
      ingress: 'anthropic-messages',
      model: 'm',
      stream: true,
      body,
      rawBody: Buffer.from(JSON.stringify(body)),
      signal,
    });

    const silent = new SilentUpstream();
    const early = new AbortController();
    const handled = relayOver(silent).handle(streamed('adm-left-early', early.signal), new MemorySink());
    await eventually('the attempt to go upstream', () => silent.sent.length === 1);
    early.abort();
    await handled;
    assert.deepEqual(silent.sent, ['up'], 'no second credential is tried for a client that left');

    const midStream = new AbortController();
    await relayOver(new ScriptedStreams({ up: [...anthropicOpening] })).handle(
      streamed('adm-left-mid-stream', midStream.signal),
      new LeavingSink(midStream),
    );
    assert.deepEqual(pool.settlements, ['a-1 released', `b-2 usage:${ANTHROPIC_OPENING_TOKENS}`]);
    assert.deepEqual(pool.failures, []);
  });

  test('a streamed answer settles with the usage of its last event', async () => {
    const pool = keys();
    pool.room.add('a');
    const { relay } = await relayWith(() => ({ type: 'ok', chunks: 3 }), pool);
    const sink = new MemorySink();
    await relay.handle(chat(true), sink);
    assert.equal(sink.status, 200);
    assert.deepEqual([...pool.settled], [['a-1', `success:${perRequest}`]]);
  });
});
