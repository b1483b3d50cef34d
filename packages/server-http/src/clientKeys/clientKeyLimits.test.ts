/**
 * A key's limits on a fake clock: the data plane with a guard over a memory store, no real time
 * passing. Budgets refuse until the UTC period ends and admit again after it; rates refuse with the
 * exact wait; a refused request never reaches the relay.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { Relay, UndiciTransport } from '@switchyard/relay';
import { FakeScheduler } from '@switchyard/runtime';
import { createDataPlane } from '../dataPlane/dataPlane.js';
import { ClientKeyGuard } from './clientKeyGuard.js';
import { CreateClientKeySchema, createRecord } from './clientKeyRecord.js';
import { LocalBudgetLedger, MemoryClientKeyStore } from './clientKeyStore.js';
import { MinuteRate, periodAt } from './limits.js';

const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
after(() => transport.close());

async function plane(startMs: number) {
  const clock = new FakeScheduler(startMs);
  const store = new MemoryClientKeyStore();
  const guard = await ClientKeyGuard.open({ store, ledger: new LocalBudgetLedger(), clock });
  const relay = new Relay({ providers: [{ name: 'demo', kind: 'mock', models: ['demo-model'] }], transport });
  let relayed = 0;
  relay.events.on('request:start', () => relayed++);
  const dataPlane = createDataPlane({ relay, apiKeys: [], clientKeys: guard });
  const server = createServer((req, res) => void dataPlane.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  const addKey = (body: Record<string, unknown>) => {
    const { record, secret } = createRecord(CreateClientKeySchema.parse({ name: 'k', ...body }), clock.now());
    guard.apply(record);
    return secret;
  };
  const ask = async (secret: string) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: 'hello there' }] }),
    });
    const body = (await response.json()) as { error?: { code: string } };
    return { status: response.status, code: body.error?.code, retryAfter: response.headers.get('retry-after') };
  };
  return { clock, addKey, ask, relayed: () => relayed };
}

describe('budgets reset at UTC period boundaries', () => {
  test('a daily request budget refuses until midnight UTC, then admits again', async () => {
    const { clock, addKey, ask, relayed } = await plane(Date.UTC(2026, 10, 28, 23, 59, 0));
    const secret = addKey({ budget: { limit: 2, unit: 'requests', period: 'daily' } });
    assert.equal((await ask(secret)).status, 200);
    assert.equal((await ask(secret)).status, 200);
    const before = relayed();
    const refused = await ask(secret);
    assert.deepEqual(refused, { status: 429, code: 'key_budget_exceeded', retryAfter: '60' });
    assert.equal(relayed(), before, 'the refused request never reached the relay');
    await clock.advance(59_000);
    assert.equal((await ask(secret)).status, 429, 'still the same day');
    await clock.advance(1_000);
    assert.equal((await ask(secret)).status, 200, 'a new day, a new budget');
  });

  test('a monthly token budget resets on the 1st at 00:00 UTC', async () => {
    const { clock, addKey, ask } = await plane(Date.UTC(2026, 10, 30, 23, 0, 0));
    const secret = addKey({ budget: { limit: 3, unit: 'tokens', period: 'monthly' } });
    assert.equal((await ask(secret)).status, 200, 'admitted below the limit; the answer spends more than it');
    assert.deepEqual(await ask(secret), { status: 429, code: 'key_budget_exceeded', retryAfter: '3600' });
    await clock.advance(3_600_000);
    assert.equal((await ask(secret)).status, 200);
  });
});

describe('per-minute rates', () => {
  test('requests: the next one fits 60/limit seconds after the first of the burst', async () => {
    const { clock, addKey, ask } = await plane(Date.UTC(2026, 0, 1));
    const secret = addKey({ requests_per_minute: 3 });
    for (let i = 0; i < 3; i++) assert.equal((await ask(secret)).status, 200);
    assert.deepEqual(await ask(secret), { status: 429, code: 'key_rate_limited', retryAfter: '20' });
    await clock.advance(20_000);
    assert.equal((await ask(secret)).status, 200);
    assert.equal((await ask(secret)).status, 429);
  });

  test('tokens: a request that spent past the minute’s allowance holds the key until it is paid back', async () => {
    const { clock, addKey, ask } = await plane(Date.UTC(2026, 0, 1));
    const secret = addKey({ tokens_per_minute: 2 });
    assert.equal((await ask(secret)).status, 200);
    const refused = await ask(secret);
    assert.equal(refused.code, 'key_rate_limited');
    await clock.advance(Number(refused.retryAfter) * 1000);
    assert.equal((await ask(secret)).status, 200);
  });

  test('expiry is read on the clock', async () => {
    const { clock, addKey, ask } = await plane(Date.UTC(2026, 0, 1));
    const secret = addKey({ expires_at: new Date(Date.UTC(2026, 0, 1, 0, 1)).toISOString() });
    assert.equal((await ask(secret)).status, 200);
    await clock.advance(60_000);
    assert.deepEqual(await ask(secret), { status: 401, code: 'key_expired', retryAfter: null });
  });
});

test('periods: days and months in UTC, across a year and a leap February', () => {
  assert.deepEqual(periodAt('monthly', Date.UTC(2026, 11, 31, 23, 59)), {
    start: '2026-12',
    startMs: Date.UTC(2026, 11, 1),
    endMs: Date.UTC(2027, 0, 1),
  });
  assert.equal(periodAt('monthly', Date.UTC(2028, 1, 10)).endMs, Date.UTC(2028, 2, 1));
  assert.equal(periodAt('daily', Date.UTC(2028, 1, 29, 12)).start, '2028-02-29');
  assert.equal(periodAt('daily', Date.UTC(2028, 1, 29, 12)).endMs, Date.UTC(2028, 2, 1));
});

test('a rate lowered mid-minute keeps the debt built so far', () => {
  const rate = new MinuteRate(60);
  for (let i = 0; i < 60; i++) assert.equal(rate.take(0), 0);
  assert.equal(rate.take(0), 1_000);
  rate.setLimit(30);
  assert.ok(rate.take(1_000) > 0, 'the minute already spent is not forgiven');
});
