import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { MemoryQuotaStore, type QuotaDelta, type QuotaTotal, type QuotaUsage } from '../store/quotaStore.js';
import { QuotaTracker } from './quotaTracker.js';

const T0 = Date.parse('2026-01-31T23:00:00.000Z');

/** A memory store that counts `add` calls and can be told to fail. */
class CountingStore extends MemoryQuotaStore {
  calls: QuotaDelta[][] = [];
  failNext = 0;
  override async add(deltas: readonly QuotaDelta[]) {
    this.calls.push([...deltas]);
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('database is down');
    }
    return super.add(deltas);
  }
}

/**
 * A store that announces totals the way a shared store does: every commit
 * (automatically, or held back with `hold` so a test can deliver it late,
 * out of order, or not at all), plus totals a test makes up with `announce`.
 */
class AnnouncingStore extends CountingStore {
  private readonly watchers = new Set<(total: QuotaTotal) => void>();
  held: QuotaTotal[] | undefined;
  override async add(deltas: readonly QuotaDelta[]) {
    const totals = await super.add(deltas);
    for (const [id, usage] of totals) this.commit({ id, ...usage, replaced: false });
    return totals;
  }
  override async set(id: string, usage: QuotaUsage) {
    await super.set(id, usage);
    this.commit({ id, ...usage, replaced: true });
  }
  watch(listener: (total: QuotaTotal) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }
  announce(total: QuotaTotal): void {
    for (const watcher of this.watchers) watcher(total);
  }
  get watcherCount(): number {
    return this.watchers.size;
  }
  private commit(total: QuotaTotal): void {
    if (this.held) this.held.push(total);
    else this.announce(total);
  }
}

function setup(
  schedule: 'daily' | 'monthly' | undefined,
  options: { flushIntervalMs?: number; flushBatchSize?: number; store?: CountingStore; clock?: FakeScheduler } = {},
) {
  const clock = options.clock ?? new FakeScheduler(T0);
  const store = options.store ?? new CountingStore();
  const tracker = new QuotaTracker({
    store,
    scheduler: clock,
    scheduleOf: () => schedule,
    flushIntervalMs: options.flushIntervalMs ?? 1000,
    ...(options.flushBatchSize === undefined ? {} : { flushBatchSize: options.flushBatchSize }),
  });
  tracker.start();
  return { clock, store, tracker };
}

describe('QuotaTracker', () => {
  test('counts tokens, exhausts at the limit, and resets at the next UTC midnight', async () => {
    const { clock, tracker } = setup('daily');
    const events: string[] = [];
    tracker.events.on('quota:exhausted', (e) => events.push(`exhausted ${e.credentialId} until ${new Date(e.resetsAt!).toISOString()}`));
    tracker.events.on('quota:reset', (e) => events.push(`reset ${e.credentialId}`));
    tracker.track('a', 'openai', 1000);
    assert.equal(tracker.record('a', 600), false);
    assert.equal(tracker.record('a', 400), true);
    assert.deepEqual(tracker.snapshot('a'), {
      limit: 1000,
      used: 1000,
      remaining: 0,
      period_start: '2026-01-31T00:00:00.000Z',
      resets_at: '2026-02-01T00:00:00.000Z',
    });
    await clock.advance(60 * 60_000 - 1);
    assert.equal(tracker.isExhausted('a'), true, 'one millisecond before midnight it is still exhausted');
    await clock.advance(1);
    assert.equal(tracker.isExhausted('a'), false);
    assert.equal(tracker.snapshot('a').used, 0);
    assert.equal(tracker.snapshot('a').period_start, '2026-02-01T00:00:00.000Z');
    assert.deepEqual(events, ['exhausted a until 2026-02-01T00:00:00.000Z', 'reset a']);
    await tracker.stop();
  });

  test('monthly resets land on the 1st at 00:00 UTC, also a month of timers away', async () => {
    const { clock, tracker } = setup('monthly');
    const resets: string[] = [];
    tracker.events.on('quota:reset', () => resets.push(new Date(clock.now()).toISOString()));
    tracker.track('m', 'openai', 10);
    tracker.record('m', 10);
    await clock.advance(60 * 60_000); // 2026-02-01T00:00Z
    tracker.record('m', 10);
    await clock.advance(28 * 24 * 60 * 60_000); // 2026-03-01T00:00Z, 28 days of one-day timer steps
    assert.deepEqual(resets, ['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
    assert.equal(tracker.snapshot('m').resets_at, '2026-04-01T00:00:00.000Z');
    await tracker.stop();
  });

  test('without a schedule usage never resets', async () => {
    const { clock, tracker } = setup(undefined);
    tracker.track('n', 'openai', 100);
    tracker.record('n', 100);
    await clock.advance(40 * 24 * 60 * 60_000);
    assert.equal(tracker.isExhausted('n'), true);
    assert.equal(tracker.snapshot('n').resets_at, null);
    await tracker.stop();
  });

  test('writes are batched: one store call per interval, never during record()', async () => {
    const { clock, store, tracker } = setup('daily');
    tracker.track('a', 'openai', null);
    tracker.track('b', 'openai', null);
    for (let i = 0; i < 500; i++) tracker.record(i % 2 ? 'a' : 'b', 3);
    assert.equal(store.calls.length, 0, 'record() never writes');
    await clock.advance(1000);
    assert.equal(store.calls.length, 1);
    assert.deepEqual(
      store.calls[0]!.map((d) => [d.id, d.tokens]),
      [
        ['a', 750],
        ['b', 750],
      ],
    );
    assert.equal((await store.load()).get('a')!.used, 750);
    await clock.advance(10_000);
    assert.equal(store.calls.length, 1, 'nothing pending, nothing written');
    await tracker.stop();
  });

  test('a full batch is written at once (flushBatchSize), without waiting for the interval', async () => {
    const { clock, store, tracker } = setup('daily', { flushBatchSize: 10 });
    tracker.track('a', 'openai', null);
    for (let i = 0; i < 9; i++) tracker.record('a', 1);
    assert.equal(store.calls.length, 0, 'nine reports wait for the interval');
    tracker.record('a', 1);
    assert.equal(store.calls.length, 1, 'the tenth fills the batch: written at once');
    assert.deepEqual(store.calls[0], [{ id: 'a', tokens: 10, period_start: '2026-01-31T00:00:00.000Z' }]);
    // Twelve more while that write is out: the next full batch follows it, and the two left wait for the interval.
    for (let i = 0; i < 12; i++) tracker.record('a', 1);
    await clock.advance(0);
    assert.equal(store.calls.length, 2);
    assert.equal(store.calls[1]![0]!.tokens, 12, 'the follow-up write takes everything pending when it starts');
    tracker.record('a', 1);
    await clock.advance(999);
    assert.equal(store.calls.length, 2);
    await clock.advance(1);
    assert.equal(store.calls.length, 3);
    assert.equal((await store.load()).get('a')!.used, 23);
    await tracker.stop();
  });

  test('a failed flush loses nothing: the tokens are written by the next one', async () => {
    const store = new CountingStore();
    const { clock, tracker } = setup('daily', { store });
    const failures: number[] = [];
    tracker.events.on('quota:flush_failed', (e) => failures.push(e.pendingCredentials));
    tracker.track('a', 'openai', null);
    store.failNext = 1;
    tracker.record('a', 100);
    await clock.advance(1000);
    tracker.record('a', 5);
    await clock.advance(1000);
    assert.deepEqual(failures, [1]);
    assert.equal((await store.load()).get('a')!.used, 105);
    await tracker.stop();
  });

  test('usage recorded after stop() (a request that ends during shutdown) is written at once, not dropped', async () => {
    const { clock, store, tracker } = setup('daily');
    tracker.track('a', 'openai', null);
    tracker.record('a', 5);
    await tracker.stop();
    assert.equal((await store.load()).get('a')!.used, 5, 'stop() writes what is pending');
    tracker.record('a', 7);
    tracker.record('a', 1);
    await clock.advance(0);
    assert.equal((await store.load()).get('a')!.used, 13);
    assert.equal(store.calls.length, 2, 'records of one turn share a write');
    store.failNext = 1;
    tracker.record('a', 2);
    await clock.advance(60_000);
    assert.equal(store.calls.length, 3, 'a failed write after stop is not retried on a timer');
    tracker.record('a', 3);
    await clock.advance(0);
    assert.equal((await store.load()).get('a')!.used, 18, 'the next record carries it');
  });

  test('usage from a period that ended is stored under it and never counted in the new one', async () => {
    const store = new CountingStore();
    const { clock, tracker } = setup('daily', { store, flushIntervalMs: 2 * 60 * 60_000 });
    tracker.track('a', 'openai', 1000);
    tracker.record('a', 300);
    await clock.advance(60 * 60_000); // midnight passes before the flush
    tracker.record('a', 7);
    await tracker.flush();
    assert.equal(tracker.snapshot('a').used, 7);
    assert.deepEqual((await store.load()).get('a'), { used: 7, period_start: '2026-02-01T00:00:00.000Z' });
    assert.deepEqual(
      store.calls.flat().map((d) => [d.tokens, d.period_start]),
      [
        [300, '2026-01-31T00:00:00.000Z'],
        [7, '2026-02-01T00:00:00.000Z'],
      ],
    );
    await tracker.stop();
  });

  test('two trackers on one store converge on the shared total at each flush they make', async () => {
    const store = new CountingStore();
    const clock = new FakeScheduler(T0);
    const a = setup('daily', { store, clock }).tracker;
    const b = setup('daily', { store, clock }).tracker;
    a.track('shared', 'openai', 1000);
    b.track('shared', 'openai', 1000);
    a.record('shared', 400);
    b.record('shared', 500);
    await clock.advance(1000); // a flushes first (store: 400), then b (store: 900)
    assert.equal(a.snapshot('shared').used, 400);
    assert.equal(b.snapshot('shared').used, 900, 'b learns of a’s usage from its own flush');
    a.record('shared', 1);
    await a.flush();
    assert.equal(a.snapshot('shared').used, 901);
    b.record('shared', 99);
    await b.flush();
    assert.equal(b.snapshot('shared').used, 1000);
    assert.equal(b.isExhausted('shared'), true, 'the node that tips the shared total over sees it exhausted');
    await a.stop();
    await b.stop();
  });

  test('with a watching store, a total committed by one tracker exhausts the credential on the other at once', async () => {
    const store = new AnnouncingStore();
    const clock = new FakeScheduler(T0);
    const a = setup('daily', { store, clock, flushIntervalMs: 0 }).tracker;
    const b = setup('daily', { store, clock, flushIntervalMs: 0 }).tracker;
    const exhaustedOnB: string[] = [];
    b.events.on('quota:exhausted', (e) => exhaustedOnB.push(e.credentialId));
    a.track('shared', 'openai', 1000);
    b.track('shared', 'openai', 1000);
    b.record('shared', 300);
    await b.flush();
    a.record('shared', 700);
    await a.flush();
    // b wrote nothing since: it knows of a's 700 only from the announcement.
    assert.equal(b.snapshot('shared').used, 1000);
    assert.equal(b.isExhausted('shared'), true);
    assert.deepEqual(exhaustedOnB, ['shared']);
    assert.equal(store.calls.length, 2, 'no extra writes');
    await a.stop();
    await b.stop();
    assert.equal(store.watcherCount, 0, 'stop() unsubscribes');
  });

  test('watched totals only raise the count in a period; other periods are ignored; a replacement (a reset elsewhere) lowers it', async () => {
    const store = new AnnouncingStore();
    const { tracker } = setup('daily', { store, flushIntervalMs: 60_000 });
    const period = '2026-01-31T00:00:00.000Z';
    tracker.track('w', 'openai', 1000);
    tracker.record('w', 50); // pending, not written: it adds to every total heard
    store.announce({ id: 'w', used: 600, period_start: period, replaced: false });
    assert.equal(tracker.snapshot('w').used, 650);
    store.announce({ id: 'w', used: 400, period_start: period, replaced: false });
    assert.equal(tracker.snapshot('w').used, 650, 'an older commit heard late does not lower the count');
    store.announce({ id: 'w', used: 5000, period_start: '2026-01-30T00:00:00.000Z', replaced: false });
    store.announce({ id: 'w', used: 5000, period_start: '2026-02-01T00:00:00.000Z', replaced: false });
    store.announce({ id: 'other', used: 5000, period_start: period, replaced: false });
    assert.equal(tracker.snapshot('w').used, 650, 'totals of another period or credential change nothing');
    store.announce({ id: 'w', used: 960, period_start: period, replaced: false });
    assert.equal(tracker.isExhausted('w'), true);
    store.announce({ id: 'w', used: 0, period_start: period, replaced: true });
    assert.equal(tracker.snapshot('w').used, 50, 'a reset on another node: the stored total restarts, pending usage stays');
    assert.equal(tracker.isExhausted('w'), false);
    await tracker.stop();
  });

  test('an answer overtaken by an announcement of a later commit does not lower the count; an answer alone still carries a reset', async () => {
    const store = new AnnouncingStore();
    const { tracker } = setup('daily', { store, flushIntervalMs: 60_000 });
    const period = '2026-01-31T00:00:00.000Z';
    tracker.track('o', 'openai', 1000);
    store.held = [];
    tracker.record('o', 100);
    const flushing = tracker.flush(); // the store answers 100
    // Before that answer lands, another node's later commit is heard.
    store.announce({ id: 'o', used: 900, period_start: period, replaced: false });
    await flushing;
    assert.equal(tracker.snapshot('o').used, 900);
    // A reset whose announcement was lost: the next answer is lower, and it is the newest word.
    await store.set('o', { used: 0, period_start: period });
    tracker.record('o', 10);
    await tracker.flush();
    assert.equal(tracker.snapshot('o').used, 10);
    await tracker.stop();
  });

  test('after a restart, stored usage of the current period counts and an older period does not', async () => {
    const store = new CountingStore();
    await store.set('today', { used: 70, period_start: '2026-01-31T00:00:00.000Z' });
    await store.set('stale', { used: 70, period_start: '2026-01-30T00:00:00.000Z' });
    const { tracker } = setup('daily', { store });
    await tracker.load();
    tracker.track('today', 'openai', 100);
    tracker.track('stale', 'openai', 100);
    tracker.track('seeded', 'openai', 100, { used: 12, period_start: '2026-01-31T00:00:00.000Z' });
    assert.deepEqual(
      ['today', 'stale', 'seeded'].map((id) => tracker.snapshot(id).used),
      [70, 0, 12],
    );
    await tracker.stop();
  });

  test('provider quota: the configured limit, else the sum of limits, null when any is unlimited', async () => {
    const clock = new FakeScheduler(T0);
    const tracker = new QuotaTracker({
      store: new MemoryQuotaStore(),
      scheduler: clock,
      providerLimitOf: (p) => (p === 'capped' ? 500 : undefined),
    });
    tracker.track('a1', 'anthropic', 100);
    tracker.track('a2', 'anthropic', 300);
    tracker.track('c1', 'capped', 1000);
    tracker.track('o1', 'openai', 100);
    tracker.track('o2', 'openai', null);
    tracker.record('a1', 50);
    tracker.record('c1', 450);
    assert.deepEqual(tracker.providerQuota('anthropic'), { limit: 400, used: 50, remaining: 350 });
    assert.deepEqual(tracker.providerQuota('capped'), { limit: 500, used: 450, remaining: 50 });
    assert.deepEqual(tracker.providerQuota('openai'), { limit: null, used: 0, remaining: null });
    // A credential moved to another provider, or untracked, counts where it is now.
    tracker.track('a1', 'openai', 100);
    assert.deepEqual(tracker.providerQuota('anthropic'), { limit: 300, used: 0, remaining: 300 });
    tracker.untrack('o2');
    assert.deepEqual(tracker.providerQuota('openai'), { limit: 200, used: 50, remaining: 150 });
    tracker.untrack('c1');
    assert.deepEqual(tracker.providerQuota('capped'), { limit: 500, used: 0, remaining: 500 });
    await tracker.stop();
  });

  test('an upstream "quota exceeded" exhausts the credential until its reset; an operator reset clears it', async () => {
    const { clock, tracker, store } = setup('daily');
    tracker.track('u', 'openai', null);
    assert.equal(tracker.markExhausted('u'), Date.parse('2026-02-01T00:00:00.000Z'));
    assert.equal(tracker.isExhausted('u'), true);
    await clock.advance(60 * 60_000);
    assert.equal(tracker.isExhausted('u'), false);
    tracker.track('v', 'openai', 10);
    tracker.record('v', 10);
    await tracker.reset('v');
    assert.equal(tracker.isExhausted('v'), false);
    assert.deepEqual((await store.load()).get('v'), { used: 0, period_start: '2026-02-01T00:00:00.000Z' });
    await tracker.stop();
  });
});
