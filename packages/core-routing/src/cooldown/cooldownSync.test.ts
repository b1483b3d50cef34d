import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import fc from 'fast-check';
import { CooldownManager } from './cooldownManager.js';
import { type CooldownPeriod, type CooldownStateStore, MemoryCooldownStateStore } from './cooldownStateStore.js';
import type { CooldownManagerOptions } from './cooldownTypes.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

/** Two "nodes" sharing one store, on one fake clock. */
function twoNodes(
  options: Omit<CooldownManagerOptions, 'scheduler' | 'store'> = {},
  store: CooldownStateStore = new MemoryCooldownStateStore(),
) {
  const clock = new FakeScheduler(T0);
  const make = () => {
    const manager = new CooldownManager({ scheduler: clock, store, detection: { errorThreshold: 1 }, ...options });
    const log: string[] = [];
    manager.events.on('cooldown:start', (p) => log.push(`start ${p.key} ${p.source}`));
    manager.events.on('cooldown:update', (e) => log.push(`update ${e.period.key} ${e.source}`));
    manager.events.on('cooldown:end', (e) => log.push(`end ${e.key} ${e.endedBy} ${e.source}`));
    manager.events.on('cooldown:store_error', (e) => log.push(`store_error ${e.operation} ${e.error}`));
    manager.start();
    return { manager, log };
  };
  const a = make();
  const b = make();
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await a.manager.flush();
      await b.manager.flush();
      await clock.advance(0);
    }
  };
  return { clock, store, a, b, settle };
}

describe('CooldownManager: sharing through a CooldownStateStore', () => {
  test('a cooldown started on one node starts on the other; an extension and a recovery follow', async () => {
    const { clock, a, b, settle } = twoNodes({ defaultDurations: { defaultMs: 60_000 } });
    const started = a.manager.recordFailure('openai', { kind: 'rate_limit' })!;
    await settle();
    assert.deepEqual(b.manager.period('openai'), started);
    assert.deepEqual(b.log, ['start openai remote']);
    await clock.advance(1000);
    b.manager.recordFailure('openai', { kind: 'rate_limit', retryAfterMs: 300_000 });
    await settle();
    assert.equal(a.manager.period('openai')?.endsAt, T0 + 301_000);
    b.manager.recover('openai');
    await settle();
    assert.equal(a.manager.isCooling('openai'), false);
    assert.deepEqual(a.log, ['start openai local', 'update openai remote', 'end openai recover remote']);
    assert.deepEqual(b.log, ['start openai remote', 'update openai local', 'end openai recover local']);
  });

  test('at the end, each node ends the period once; the losing conditional delete is not an error', async () => {
    const { clock, store, a, b, settle } = twoNodes({ defaultDurations: { defaultMs: 10_000 } });
    a.manager.recordFailure('p', { kind: 'error' });
    await settle();
    await clock.advance(10_000);
    await settle();
    assert.deepEqual(a.log, ['start p local', 'end p expiry local']);
    // b ends it by its own timer or by a's delete, whichever comes first; never twice.
    assert.deepEqual(
      b.log.map((line) => line.replace(/ (local|remote)$/, '')),
      ['start p', 'end p expiry'],
    );
    assert.deepEqual(await store.list(), []);
  });

  test('a node ending a period it holds does not remove a newer one another node wrote meanwhile', async () => {
    const shared = new MemoryCooldownStateStore();
    let releaseDelete: () => void = () => {};
    // Node a's deletes reach the store late, as over a slow connection.
    const slow: CooldownStateStore = Object.assign(Object.create(shared), {
      delete: async (key: string, options: Parameters<CooldownStateStore['delete']>[1]) => {
        await new Promise<void>((resolve) => (releaseDelete = resolve));
        return shared.delete(key, options);
      },
    });
    const clock = new FakeScheduler(T0);
    const a = new CooldownManager({
      scheduler: clock,
      store: slow,
      detection: { errorThreshold: 1 },
      defaultDurations: { defaultMs: 10_000 },
    });
    const b = new CooldownManager({ scheduler: clock, store: shared, detection: { errorThreshold: 1 } });
    a.start();
    b.start();
    a.recordFailure('p', { kind: 'rate_limit' });
    await clock.advance(1000);
    a.recover('p'); // a ends the period; its delete is held
    b.recordFailure('p', { kind: 'rate_limit', retryAfterMs: 60_000 }); // b still holds it and extends it
    await b.flush();
    await clock.advance(0);
    releaseDelete();
    await a.flush();
    await clock.advance(0);
    const extended = { key: 'p', reason: 'rate_limit', startedAt: T0, endsAt: T0 + 61_000 };
    assert.deepEqual(await shared.get('p'), extended);
    assert.deepEqual(a.period('p'), extended);
    assert.deepEqual(b.period('p'), extended);
  });

  test('a node that starts later loads the running periods; a stale one is ended at once', async () => {
    const store = new MemoryCooldownStateStore();
    await store.set({ key: 'live', reason: 'manual', startedAt: T0 - 1000, endsAt: T0 + 60_000 });
    await store.set({ key: 'stale', reason: 'error', startedAt: T0 - 120_000, endsAt: T0 - 60_000 });
    const clock = new FakeScheduler(T0);
    const manager = new CooldownManager({ scheduler: clock, store });
    await manager.sync();
    assert.equal(manager.isCooling('live'), true);
    assert.equal(manager.isCooling('stale'), false);
    await manager.flush();
    assert.deepEqual(
      (await store.list()).map((p) => p.key),
      ['live'],
      'the stale period is removed from the store',
    );
  });

  test('a slow list() at start does not undo a change that arrived while it loaded', async () => {
    const shared = new MemoryCooldownStateStore();
    await shared.set({ key: 'p', reason: 'rate_limit', startedAt: T0, endsAt: T0 + 60_000 });
    let releaseList: () => void = () => {};
    const slow: CooldownStateStore = Object.assign(Object.create(shared), {
      list: async () => {
        const snapshot = await shared.list();
        await new Promise<void>((resolve) => (releaseList = resolve));
        return snapshot;
      },
    });
    const clock = new FakeScheduler(T0);
    const late = new CooldownManager({ scheduler: clock, store: slow });
    late.start(); // subscribes, then lists
    await clock.advance(0);
    const newer = { key: 'p', reason: 'manual' as const, startedAt: T0, endsAt: T0 + 600_000 };
    await shared.set(newer); // another node, while the list is in flight
    await clock.advance(0);
    releaseList();
    await clock.advance(0);
    assert.deepEqual(late.period('p'), newer);
    late.stop();
  });

  test('when the store fails, the node keeps its own view and reports the failure', async () => {
    const store = new MemoryCooldownStateStore();
    const failing: CooldownStateStore = {
      get: (key) => store.get(key),
      list: () => store.list(),
      delete: (key, options) => store.delete(key, options),
      subscribe: (listener) => store.subscribe(listener),
      set: async () => {
        throw new Error('connection terminated');
      },
    };
    const { a } = twoNodes({}, failing);
    a.manager.recordFailure('p', { kind: 'rate_limit' });
    await a.manager.flush();
    assert.equal(a.manager.isCooling('p'), true);
    assert.deepEqual(a.log, ['start p local', 'store_error set connection terminated']);
  });

  test('a malformed change from the store is reported and ignored', async () => {
    const store = new MemoryCooldownStateStore();
    let deliver: (change: unknown) => void = () => {};
    const odd: CooldownStateStore = Object.assign(Object.create(store), {
      subscribe: (listener: (change: unknown) => void) => {
        deliver = listener;
        return () => {};
      },
    });
    const { b } = twoNodes({}, odd); // the last node to subscribe gets `deliver`
    deliver({ type: 'set', period: { key: 'p', reason: 'manual', startedAt: 5, endsAt: 'soon' } });
    assert.equal(b.manager.isCooling('p'), false);
    assert.match(b.log[0] ?? '', /^store_error apply store change period\.endsAt/);
  });

  test('property: whatever two nodes do, once writes settle both hold exactly what the store holds', async () => {
    type Op =
      | { node: 0 | 1; op: 'fail'; key: number; retryAfterMs: number }
      | { node: 0 | 1; op: 'cooldown'; key: number; ms: number }
      | { node: 0 | 1; op: 'recover'; key: number }
      | { op: 'advance'; ms: number }
      | { op: 'settle' };
    const node = fc.constantFrom(0 as const, 1 as const);
    const key = fc.nat({ max: 2 });
    const ms = fc.integer({ min: 1, max: 30_000 });
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ node, op: fc.constant('fail' as const), key, retryAfterMs: fc.integer({ min: 0, max: 30_000 }) }),
      fc.record({ node, op: fc.constant('cooldown' as const), key, ms }),
      fc.record({ node, op: fc.constant('recover' as const), key }),
      fc.record({ op: fc.constant('advance' as const), ms }),
      fc.record({ op: fc.constant('settle' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const { clock, store, a, b, settle } = twoNodes({ defaultDurations: { defaultMs: 10_000 } });
        const nodes = [a.manager, b.manager];
        for (const o of ops) {
          if (o.op === 'advance') await clock.advance(o.ms);
          else if (o.op === 'settle') await settle();
          else if (o.op === 'fail') nodes[o.node]!.recordFailure(`k${o.key}`, { kind: 'rate_limit', retryAfterMs: o.retryAfterMs });
          else if (o.op === 'cooldown') nodes[o.node]!.cooldown(`k${o.key}`, o.ms);
          else nodes[o.node]!.recover(`k${o.key}`);
        }
        await settle();
        for (let k = 0; k < 3; k++) {
          const stored: CooldownPeriod | undefined = await store.get(`k${k}`);
          assert.deepEqual(a.manager.period(`k${k}`), stored, `node a, k${k}`);
          assert.deepEqual(b.manager.period(`k${k}`), stored, `node b, k${k}`);
        }
        assert.ok(![...a.log, ...b.log].some((line) => line.startsWith('store_error')));
        a.manager.stop();
        b.manager.stop();
      }),
      { numRuns: 150 },
    );
  });
});
