/**
 * Which upstream failures count towards a provider's cooldown. A server error
 * with one credential that another credential of the same provider then
 * recovers is the credential's (its pool cools it), so one flaky credential
 * among healthy ones never cools the provider under the shipped threshold
 * (5 errors a minute); a provider whose every credential fails still cools,
 * and so does one whose failure only another provider recovered.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { CooldownManager } from '@switchyard/core-routing';
import { FakeScheduler } from '@switchyard/runtime';
import { type FakeOpenAi, startFakeOpenAi } from '@switchyard/test-support';
import { Relay, type RelayCredentialPool } from './relay.js';
import { MemorySink } from './sink.js';
import type { ProviderConfig, RelayCredential, RelayRequest } from './types.js';
import { UndiciTransport } from './upstream.js';

const upstreams: FakeOpenAi[] = [];
const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
after(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
  await transport.close();
});

/** An upstream answering 500 to the listed keys and normally to the others. */
async function upstreamFailing(...badKeys: string[]): Promise<FakeOpenAi> {
  const fake = await startFakeOpenAi({
    behaviour: (request) =>
      badKeys.some((key) => request.headers.authorization === `Bearer ${key}`) ? { type: 'status', status: 500 } : { type: 'ok' },
  });
  upstreams.push(fake);
  return fake;
}

/** Round robin over credentials, skipping those a request already tried; it never cools any (that is not under test). */
class RoundRobinPool implements RelayCredentialPool {
  readonly used: string[] = [];
  private next = 0;
  constructor(private readonly credentials: RelayCredential[]) {}
  acquire(options?: { exclude?: ReadonlySet<string> }): RelayCredential {
    const usable = this.credentials.filter((c) => !options?.exclude?.has(c.id));
    if (usable.length === 0) throw new Error('no credentials');
    const credential = usable[this.next++ % usable.length]!;
    this.used.push(credential.id);
    return credential;
  }
  reportSuccess() {}
  reportUsage() {}
  reportFailure() {}
  async refresh(id: string): Promise<RelayCredential> {
    throw new Error(`${id} is an API key: nothing to refresh`);
  }
}

const keys = (...ids: string[]) => ids.map((id) => ({ id, token: id }));
const provider = (name: string, fake: FakeOpenAi): ProviderConfig => ({ name, kind: 'openai', baseUrl: fake.url, models: ['gpt-4o'] });
let counter = 0;
function chat(): RelayRequest {
  const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] };
  return {
    requestId: `req-${++counter}`,
    ingress: 'openai-chat',
    model: 'gpt-4o',
    stream: false,
    body,
    rawBody: Buffer.from(JSON.stringify(body)),
  };
}

/** The shipped detection: 5 errors within a minute cool a provider. */
const shippedCooldowns = (clock: FakeScheduler) =>
  new CooldownManager({ scheduler: clock, detection: { windowMs: 60_000, errorThreshold: 5 }, defaultDurations: { defaultMs: 300_000 } });

test('one flaky credential among healthy ones does not cool its provider: the failures a sibling recovered are not counted', async () => {
  const clock = new FakeScheduler(1_000_000);
  const cooldowns = shippedCooldowns(clock);
  const pool = new RoundRobinPool(keys('flaky', 'steady-1', 'steady-2'));
  const relay = new Relay({
    providers: [provider('up', await upstreamFailing('flaky'))],
    transport,
    credentials: { pool: () => pool },
    cooldowns,
    clock,
  });
  for (let i = 0; i < 30; i++) {
    const sink = new MemorySink();
    await relay.handle(chat(), sink);
    assert.equal(sink.status, 200, `request ${i} answered by a steady credential`);
  }
  const flakyCalls = pool.used.filter((id) => id === 'flaky').length;
  assert.ok(flakyCalls >= 10, `the flaky credential failed ${flakyCalls} times, past the threshold of 5`);
  assert.equal(cooldowns.isCooling('up'), false, 'the provider is not cooled by failures its other credentials recovered');
  relay.close();
});

test('a provider whose every credential fails still cools down', async () => {
  const clock = new FakeScheduler(1_000_000);
  const cooldowns = shippedCooldowns(clock);
  const pool = new RoundRobinPool(keys('one', 'two', 'three'));
  const fake = await upstreamFailing('one', 'two', 'three');
  const relay = new Relay({ providers: [provider('up', fake)], transport, credentials: { pool: () => pool }, cooldowns, clock });
  const sink = new MemorySink();
  await relay.handle(chat(), sink);
  assert.equal(sink.status, 502);
  assert.equal(cooldowns.isCooling('up'), false, 'three failures: below the threshold of 5');
  await relay.handle(chat(), new MemorySink());
  assert.equal(cooldowns.isCooling('up'), true, 'six unrecovered failures cool the provider');
  const calls = fake.chatCount;
  const held = new MemorySink();
  await relay.handle(chat(), held);
  assert.equal(fake.chatCount, calls, 'no traffic to the cooling provider');
  relay.close();
});

test('a failure that only another provider recovered counts against the failing provider', async () => {
  const clock = new FakeScheduler(1_000_000);
  const cooldowns = shippedCooldowns(clock);
  const pools: Record<string, RoundRobinPool> = { broken: new RoundRobinPool(keys('b-key')), fine: new RoundRobinPool(keys('f-key')) };
  const relay = new Relay({
    providers: [
      { ...provider('broken', await upstreamFailing('b-key')), priority: 0 },
      { ...provider('fine', await upstreamFailing()), priority: 1 },
    ],
    strategy: 'priority',
    transport,
    credentials: { pool: (name) => pools[name] },
    cooldowns,
    clock,
  });
  for (let i = 0; i < 5; i++) {
    const sink = new MemorySink();
    await relay.handle(chat(), sink);
    assert.equal(sink.status, 200, `request ${i} answered by the other provider`);
  }
  assert.equal(cooldowns.isCooling('broken'), true, 'five failures the provider itself never recovered cool it');
  assert.equal(cooldowns.isCooling('fine'), false);
  relay.close();
});
