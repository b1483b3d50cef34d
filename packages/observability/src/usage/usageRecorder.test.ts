import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import { runUsageStoreContract } from '../contract.js';
import { requestEnd } from '../testing/fixtures.js';
import { ANONYMOUS_CLIENT, UsageRecorder } from './usageRecorder.js';
import { MemoryUsageStore, type UsageRollup, type UsageStore } from './usageStore.js';

runUsageStoreContract('memory', async () => ({ store: new MemoryUsageStore() }));

const T0 = Date.parse('2026-03-01T12:00:00Z');
const alice = { keyId: 'static:alice', name: 'alice', tenant: 'team-a' };
const bob = { keyId: 'static:bob', name: 'bob', tenant: 'team-b' };

/** A store that records each batch it is given, and fails while `failing` is set. */
class RecordingStore extends MemoryUsageStore {
  batches: UsageRollup[][] = [];
  failing = false;
  override async add(rollups: readonly UsageRollup[]): Promise<void> {
    if (this.failing) throw new Error('disk full');
    this.batches.push(rollups.map((r) => ({ ...r })));
    await super.add(rollups);
  }
}

async function minuteTotals(store: UsageStore, groupBy: 'key' | 'tenant' | 'provider' | 'model', from = T0, to = T0 + 10 * 60_000) {
  return (await store.series({ from, to, groupBy, stepMs: 60_000 })).map((b) => ({
    start: b.start - from,
    group: b.group,
    requests: b.requests,
    errors: b.errors,
    cacheHits: b.cacheHits,
    tokens: [b.inputTokens, b.outputTokens],
    cost: Math.round(b.cost * 1e9) / 1e9,
  }));
}

test('each request counts into its minute: the boundary falls exactly on the minute (fake clock)', async () => {
  const clock = new FakeScheduler(T0);
  const store = new RecordingStore();
  const recorder = new UsageRecorder({ store, scheduler: clock, flushIntervalMs: 5_000 });
  recorder.record(requestEnd({ client: alice, at: T0 + 59_999 }));
  recorder.record(requestEnd({ client: alice, at: T0 + 60_000 }));
  recorder.record(requestEnd({ client: alice, at: T0 + 60_001 }));
  assert.deepEqual(store.batches, [], 'nothing is written on the request path');
  await clock.advance(5_000);
  assert.equal(store.batches.length, 1, 'one write for the interval');
  assert.deepEqual(
    (await minuteTotals(store, 'key')).map((r) => [r.start, r.requests]),
    [
      [0, 1],
      [60_000, 2],
    ],
  );
});

test('keys, tenants, providers and models are kept apart; tokens, cost, cache hits and errors add up', async () => {
  const clock = new FakeScheduler(T0);
  const store = new MemoryUsageStore();
  const prices: Record<string, { input: number; output: number }> = { openai: { input: 1, output: 2 } };
  const recorder = new UsageRecorder({ store, scheduler: clock, tokenPrice: (p) => prices[p] });
  recorder.record(requestEnd({ client: alice, at: T0, tokens: { input: 1000, output: 500 } }));
  recorder.record(requestEnd({ client: alice, at: T0, cached: true, tokens: { input: 1000, output: 0 } }));
  recorder.record(requestEnd({ client: alice, at: T0, outcome: 'error', errorType: 'upstream_5xx', tokens: { input: 0, output: 0 } }));
  recorder.record(requestEnd({ client: alice, at: T0, outcome: 'client_closed', tokens: { input: 0, output: 0 } }));
  recorder.record(requestEnd({ client: bob, at: T0, provider: 'anthropic', model: 'claude', tokens: { input: 10, output: 10 } }));
  recorder.record(requestEnd({ client: null, at: T0, provider: null, outcome: 'error', tokens: { input: 0, output: 0 } }));
  await recorder.flush();
  assert.deepEqual(await minuteTotals(store, 'key'), [
    { start: 0, group: 'anonymous', requests: 1, errors: 1, cacheHits: 0, tokens: [0, 0], cost: 0 },
    // 1000×1/1000 + 500×2/1000 = 2, and 1000×1/1000 = 1 (a cached answer's tokens are priced as reported).
    { start: 0, group: 'static:alice', requests: 4, errors: 1, cacheHits: 1, tokens: [2000, 500], cost: 3 },
    // No price for anthropic: no cost.
    { start: 0, group: 'static:bob', requests: 1, errors: 0, cacheHits: 0, tokens: [10, 10], cost: 0 },
  ]);
  assert.deepEqual(
    (await minuteTotals(store, 'tenant')).map((r) => [r.group, r.requests]),
    [
      ['default', 1],
      ['team-a', 4],
      ['team-b', 1],
    ],
  );
  assert.deepEqual(
    (await minuteTotals(store, 'provider')).map((r) => [r.group, r.requests]),
    [
      ['anthropic', 1],
      ['none', 1],
      ['openai', 4],
    ],
  );
  assert.deepEqual(
    (await minuteTotals(store, 'model')).map((r) => [r.group, r.requests]),
    [
      ['claude', 1],
      ['gpt-4o', 5],
    ],
  );
  assert.equal(ANONYMOUS_CLIENT.tenant, 'default');
});

test('a price change applies to the requests after it, not before', async () => {
  const store = new MemoryUsageStore();
  let price = { input: 1, output: 1 };
  const recorder = new UsageRecorder({ store, scheduler: new FakeScheduler(T0), tokenPrice: () => price });
  recorder.record(requestEnd({ client: alice, at: T0, tokens: { input: 1000, output: 0 } }));
  price = { input: 10, output: 10 };
  recorder.record(requestEnd({ client: alice, at: T0, tokens: { input: 1000, output: 0 } }));
  await recorder.flush();
  assert.equal((await minuteTotals(store, 'key'))[0]!.cost, 11);
});

test('a failed write is kept, merged with what came after, and written at the next interval', async () => {
  const clock = new FakeScheduler(T0);
  const store = new RecordingStore();
  const failures: number[] = [];
  const recorder = new UsageRecorder({ store, scheduler: clock, flushIntervalMs: 1_000, onFlushError: (_e, rows) => failures.push(rows) });
  store.failing = true;
  recorder.record(requestEnd({ client: alice, at: T0 }));
  recorder.record(requestEnd({ client: bob, at: T0 }));
  await clock.advance(1_000);
  assert.deepEqual(failures, [2]);
  assert.equal(recorder.pendingRows, 2);
  recorder.record(requestEnd({ client: alice, at: T0 + 1_000 }));
  store.failing = false;
  await clock.advance(1_000);
  assert.equal(recorder.pendingRows, 0);
  assert.equal(recorder.failures, 1);
  assert.deepEqual(
    (await minuteTotals(store, 'key')).map((r) => [r.group, r.requests]),
    [
      ['static:alice', 2],
      ['static:bob', 1],
    ],
  );
});

test('close writes what is left at once, without waiting for the interval', async () => {
  const clock = new FakeScheduler(T0);
  const store = new RecordingStore();
  const recorder = new UsageRecorder({ store, scheduler: clock, flushIntervalMs: 60_000 });
  const relay = new EventEmitter();
  const detach = recorder.attach(relay);
  relay.emit('request:end', requestEnd({ client: alice, at: T0 }));
  detach();
  relay.emit('request:end', requestEnd({ client: alice, at: T0 }));
  await recorder.close();
  assert.equal(clock.pending, 0, 'no timer left behind');
  assert.deepEqual(
    (await minuteTotals(store, 'key')).map((r) => [r.group, r.requests]),
    [['static:alice', 1]],
  );
});

test('flushes run one after another: a flush asked for during a write waits for it', async () => {
  const clock = new FakeScheduler(T0);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const order: string[] = [];
  const store = new (class extends MemoryUsageStore {
    calls = 0;
    override async add(rollups: readonly UsageRollup[]): Promise<void> {
      const call = ++this.calls;
      order.push(`start ${call}`);
      if (call === 1) await gate;
      await super.add(rollups);
      order.push(`end ${call}`);
    }
  })();
  const recorder = new UsageRecorder({ store, scheduler: clock });
  recorder.record(requestEnd({ client: alice, at: T0 }));
  const first = recorder.flush();
  while (order.length === 0) await new Promise((resolve) => setImmediate(resolve));
  recorder.record(requestEnd({ client: bob, at: T0 }));
  const second = recorder.flush();
  release();
  await Promise.all([first, second]);
  assert.deepEqual(order, ['start 1', 'end 1', 'start 2', 'end 2']);
});
