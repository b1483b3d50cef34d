import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import fc from 'fast-check';
import { AllProvidersInCooldown, NoProviderAvailable, RoutingError } from '../errors.js';
import { type CandidateSpec, Selector, STRATEGIES, type StrategyName } from './selector.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `p${i}` }));
const pickMany = (selector: Selector, n: number) => Array.from({ length: n }, () => selector.select());
const isNoProvider = (e: unknown) => e instanceof NoProviderAvailable && e.code === 'no_provider_available';

describe('Selector: the specified rules', () => {
  test('rule 1: candidates in cooldown are removed before the strategy runs (every strategy)', () => {
    for (const strategy of STRATEGIES) {
      const selector = new Selector(ids(3), { strategy });
      selector.markUnavailable('p1', 'cooldown', 1000);
      assert.ok(!pickMany(selector, 30).includes('p1'), strategy);
    }
  });

  test('rule 2: everything cooling fails with AllProvidersInCooldown and the earliest return', () => {
    for (const strategy of STRATEGIES) {
      const selector = new Selector(ids(3), { strategy });
      selector.markUnavailable('p0', 'cooldown', 5000);
      selector.markUnavailable('p1', 'cooldown', 3000);
      selector.markUnavailable('p2', 'cooldown', 9000);
      assert.throws(
        () => selector.select(),
        (e: unknown) => e instanceof AllProvidersInCooldown && e.retryAt === 3000 && e.code === 'all_providers_in_cooldown',
        strategy,
      );
    }
  });

  test('rule 2: cooling and unhealthy together still name the cooldown; only unhealthy is NoProviderAvailable', () => {
    const selector = new Selector(ids(2));
    selector.markUnavailable('p0', 'cooldown', 7000);
    selector.markUnavailable('p1', 'unhealthy');
    assert.throws(
      () => selector.select(),
      (e: unknown) => e instanceof AllProvidersInCooldown && e.retryAt === 7000,
    );
    selector.markAvailable('p0');
    selector.markUnavailable('p0', 'unhealthy');
    assert.throws(
      () => selector.select(),
      (e: unknown) => isNoProvider(e) && /2 unhealthy/.test((e as Error).message),
    );
  });

  test('rule 3: round_robin is counter mod candidates, then counter + 1', () => {
    const selector = new Selector(ids(3));
    assert.deepEqual(pickMany(selector, 7), ['p0', 'p1', 'p2', 'p0', 'p1', 'p2', 'p0']);
    assert.equal(selector.status().counter, 7);
    selector.markUnavailable('p0', 'cooldown', 1);
    // counter 7 over [p1, p2]: 7 mod 2 = 1 → p2, then 8 mod 2 = 0 → p1.
    assert.deepEqual(pickMany(selector, 2), ['p2', 'p1']);
  });

  test('rule 4: quota_aware picks the highest remaining quota and fails when none is above 0', () => {
    const selector = new Selector(ids(3), { strategy: 'quota_aware' });
    selector.setRemainingQuota('p0', 10);
    selector.setRemainingQuota('p1', 500);
    selector.setRemainingQuota('p2', 20);
    assert.equal(selector.select(), 'p1');
    selector.setRemainingQuota('p1', 0);
    assert.equal(selector.select(), 'p2');
    selector.setRemainingQuota('p0', 0);
    selector.setRemainingQuota('p2', -5);
    assert.throws(
      () => selector.select(),
      (e: unknown) => isNoProvider(e) && /quota/.test((e as Error).message),
    );
  });

  test('rule 5: latency picks the lowest average over the window, and old samples age out', async () => {
    const clock = new FakeScheduler(0);
    const selector = new Selector(ids(2), { strategy: 'latency', clock, latencyWindowMs: 60_000 });
    selector.recordLatency('p0', 100);
    selector.recordLatency('p1', 300);
    assert.equal(selector.select(), 'p0');
    selector.recordLatency('p0', 900); // p0 now averages 500
    assert.equal(selector.select(), 'p1');
    await clock.advance(61_000);
    selector.recordLatency('p0', 50);
    // p1's samples have left the window (it reads as unmeasured, 0), so it is tried again.
    assert.equal(selector.select(), 'p1');
    selector.recordLatency('p1', 80);
    assert.equal(selector.select(), 'p0');
    assert.equal(selector.status().candidates[0]?.average_latency_ms, 50);
  });

  test('rule 6: a candidate without a price is not free: it comes after every priced one', () => {
    const selector = new Selector(
      [
        { id: 'unpriced', priority: 0 },
        { id: 'dear', priority: 5, costPer1k: { input: 10, output: 30 } },
        { id: 'unpriced-2', priority: 1 },
      ],
      { strategy: 'cost' },
    );
    assert.equal(selector.select(), 'dear');
    // With the priced one excluded, the unpriced ones are still served, by priority.
    assert.equal(selector.select({ exclude: new Set(['dear']) }), 'unpriced');
  });

  test('rule 6: cost picks the lowest mean of input and output prices, ties by priority', () => {
    const selector = new Selector(
      [
        { id: 'dear', costPer1k: { input: 10, output: 30 } },
        { id: 'cheap-b', priority: 2, costPer1k: { input: 1, output: 3 } },
        { id: 'cheap-a', priority: 1, costPer1k: { input: 2, output: 2 } },
      ],
      { strategy: 'cost' },
    );
    assert.equal(selector.select(), 'cheap-a');
    selector.markUnavailable('cheap-a', 'unhealthy');
    assert.equal(selector.select(), 'cheap-b');
    assert.equal(selector.status().candidates.find((c) => c.id === 'dear')?.average_cost_per_1k, 20);
  });

  test('rule 7: an empty candidate list fails with NoProviderAvailable', () => {
    for (const strategy of STRATEGIES) {
      assert.throws(() => new Selector([], { strategy }).select(), isNoProvider, strategy);
    }
  });
});

describe('Selector: further strategies', () => {
  test('priority serves the lowest number first, round robin within it, and falls back by level', () => {
    const selector = new Selector(
      [
        { id: 'backup', priority: 5 },
        { id: 'a', priority: 1 },
        { id: 'b', priority: 1 },
      ],
      { strategy: 'priority' },
    );
    assert.deepEqual(pickMany(selector, 4).sort(), ['a', 'a', 'b', 'b']);
    selector.markUnavailable('a', 'cooldown', 10);
    selector.markUnavailable('b', 'unhealthy');
    assert.equal(selector.select(), 'backup');
  });

  test('weighted gives exact shares over a full cycle', () => {
    const selector = new Selector(
      [
        { id: 'big', weight: 5 },
        { id: 'mid', weight: 3 },
        { id: 'small', weight: 2 },
      ],
      { strategy: 'weighted' },
    );
    const counts = new Map<string, number>();
    for (const id of pickMany(selector, 100)) counts.set(id, (counts.get(id) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(counts), { big: 50, mid: 30, small: 20 });
  });

  test('least_busy picks the fewest requests in flight', () => {
    const selector = new Selector(ids(3), { strategy: 'least_busy' });
    const first = selector.select();
    selector.begin(first);
    const second = selector.select();
    assert.notEqual(second, first);
    selector.begin(second);
    const third = selector.select();
    assert.deepEqual(new Set([first, second, third]).size, 3);
    selector.begin(third);
    selector.end(second);
    assert.equal(selector.select(), second);
  });

  test('exclusion skips candidates a request already tried, then reports them all tried', () => {
    for (const strategy of STRATEGIES) {
      const selector = new Selector(ids(3), { strategy });
      const tried = new Set<string>();
      for (let i = 0; i < 3; i++) tried.add(selector.select({ exclude: tried }));
      assert.equal(tried.size, 3, strategy);
      assert.throws(
        () => selector.select({ exclude: tried }),
        (e: unknown) => isNoProvider(e) && /already tried/.test((e as Error).message),
      );
    }
  });

  test('setCandidates keeps the state of candidates that stay; setStrategy switches live', () => {
    const selector = new Selector(ids(3), { strategy: 'quota_aware' });
    selector.setRemainingQuota('p2', 999);
    selector.markUnavailable('p1', 'cooldown', 77);
    selector.setCandidates([{ id: 'p2' }, { id: 'p1' }, { id: 'new' }]);
    assert.equal(selector.select(), 'new', 'a new candidate without a quota is unlimited');
    selector.setRemainingQuota('new', 1);
    assert.equal(selector.select(), 'p2', 'p2 kept its quota of 999');
    assert.equal(selector.isAvailable('p1'), false);
    selector.setStrategy('round_robin');
    assert.ok(!pickMany(selector, 10).includes('p1'));
    assert.throws(
      () => selector.setStrategy('random' as StrategyName),
      (e: unknown) => e instanceof RoutingError && e.code === 'invalid_config',
    );
    assert.throws(() => selector.setCandidates([{ id: 'x' }, { id: 'x' }]), /twice/);
    assert.throws(() => selector.markAvailable('nope'), /unknown candidate/);
  });

  test('a candidate held out for two reasons returns only when both are cleared', () => {
    for (const strategy of STRATEGIES) {
      const selector = new Selector(ids(2), { strategy });
      selector.markUnavailable('p0', 'exhausted');
      selector.markUnavailable('p0', 'cooldown', 5000);
      assert.deepEqual(selector.unavailableReasons('p0'), ['cooldown', 'exhausted']);
      assert.equal(selector.status().candidates[0]?.available_at, new Date(5000).toISOString());
      selector.markAvailable('p0', 'cooldown');
      assert.equal(selector.isAvailable('p0'), false, strategy);
      assert.equal(selector.status().candidates[0]?.unavailable_reason, 'exhausted');
      assert.equal(selector.status().candidates[0]?.available_at, null);
      assert.ok(!pickMany(selector, 6).includes('p0'), strategy);
      selector.markAvailable('p0', 'exhausted');
      assert.ok(pickMany(selector, 6).includes('p0'), strategy);
      selector.markUnavailable('p1', 'unhealthy');
      selector.markUnavailable('p1', 'disabled');
      selector.markAvailable('p1');
      assert.equal(selector.isAvailable('p1'), true, 'markAvailable without a reason clears every reason');
    }
    const selector = new Selector(ids(1));
    assert.throws(
      () => selector.markUnavailable('p0', 'asleep' as 'cooldown'),
      (e: unknown) => e instanceof RoutingError && e.code === 'invalid_argument' && /asleep/.test(e.message),
    );
    assert.equal(selector.isAvailable('p0'), true);
    assert.equal(selector.has('p0'), true);
    assert.equal(selector.has('p9'), false);
  });

  test('status gives the strategy, counter, candidates with stats, and the last decision', () => {
    const clock = new FakeScheduler(Date.parse('2026-03-01T00:00:00Z'));
    const selector = new Selector([{ id: 'a', priority: 1, weight: 2 }, { id: 'b' }], { clock });
    selector.markUnavailable('b', 'cooldown', clock.now() + 30_000);
    selector.recordLatency('a', 42);
    selector.begin('a');
    selector.select();
    const status = selector.status();
    assert.equal(status.strategy, 'round_robin');
    assert.equal(status.counter, 1);
    assert.deepEqual(status.last_decision, { id: 'a', strategy: 'round_robin', at: '2026-03-01T00:00:00.000Z', candidates_considered: 1 });
    assert.deepEqual(status.candidates[0], {
      id: 'a',
      available: true,
      unavailable_reason: null,
      unavailable_reasons: [],
      available_at: null,
      priority: 1,
      weight: 2,
      in_flight: 1,
      remaining_quota: null,
      average_latency_ms: 42,
      average_cost_per_1k: null,
      picks: 1,
    });
    assert.equal(status.candidates[1]?.unavailable_reason, 'cooldown');
    assert.equal(status.candidates[1]?.available_at, '2026-03-01T00:00:30.000Z');
  });
});

describe('Selector: properties', () => {
  type Op =
    | { kind: 'select' }
    | { kind: 'down'; slot: number; reason: 'cooldown' | 'unhealthy' }
    | { kind: 'up'; slot: number; reason?: 'cooldown' | 'unhealthy' }
    | { kind: 'quota'; slot: number; value: number }
    | { kind: 'latency'; slot: number; value: number }
    | { kind: 'begin'; slot: number }
    | { kind: 'end'; slot: number };
  const N = 8;
  const slot = fc.nat({ max: N - 1 });
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 5, arbitrary: fc.constant({ kind: 'select' as const }) },
    fc.record({ kind: fc.constant('down' as const), slot, reason: fc.constantFrom('cooldown' as const, 'unhealthy' as const) }),
    fc.record(
      { kind: fc.constant('up' as const), slot, reason: fc.constantFrom('cooldown' as const, 'unhealthy' as const) },
      { requiredKeys: ['kind', 'slot'] },
    ),
    fc.record({ kind: fc.constant('quota' as const), slot, value: fc.integer({ min: -10, max: 1000 }) }),
    fc.record({ kind: fc.constant('latency' as const), slot, value: fc.integer({ min: 0, max: 5000 }) }),
    fc.record({ kind: fc.constant('begin' as const), slot }),
    fc.record({ kind: fc.constant('end' as const), slot }),
  );
  const specs: CandidateSpec[] = Array.from({ length: N }, (_, i) => ({
    id: `p${i}`,
    priority: i % 3,
    weight: (i % 4) + 1,
    costPer1k: { input: (i * 7) % 5, output: (i * 3) % 4 },
  }));

  test('no strategy ever picks an unavailable candidate, and quota_aware always picks a maximum', () => {
    fc.assert(
      fc.property(fc.constantFrom(...STRATEGIES), fc.array(op, { maxLength: 200 }), (strategy, ops) => {
        const selector = new Selector(specs, { strategy });
        const held = new Map<string, Set<string>>();
        const down = {
          has: (id: string) => (held.get(id)?.size ?? 0) > 0,
          get size() {
            return specs.filter((s) => down.has(s.id)).length;
          },
        };
        const quota = new Map<string, number>();
        for (const o of ops) {
          if (o.kind === 'select') {
            let picked: string;
            try {
              picked = selector.select();
            } catch (error) {
              assert.ok(error instanceof RoutingError);
              const everyoneDown = down.size === N;
              const noQuota =
                strategy === 'quota_aware' && specs.every((s) => down.has(s.id) || (quota.get(s.id) ?? Number.POSITIVE_INFINITY) <= 0);
              assert.ok(everyoneDown || noQuota, `unexpected ${(error as Error).message}`);
              continue;
            }
            assert.ok(!down.has(picked), `${strategy} picked ${picked}, which is down`);
            if (strategy === 'quota_aware') {
              const mine = quota.get(picked) ?? Number.POSITIVE_INFINITY;
              for (const s of specs) if (!down.has(s.id)) assert.ok((quota.get(s.id) ?? Number.POSITIVE_INFINITY) <= mine);
            }
          } else {
            const id = `p${o.slot}`;
            if (o.kind === 'down') {
              selector.markUnavailable(id, o.reason, 1000);
              held.set(id, (held.get(id) ?? new Set()).add(o.reason));
            } else if (o.kind === 'up') {
              selector.markAvailable(id, o.reason);
              if (o.reason) held.get(id)?.delete(o.reason);
              else held.delete(id);
            } else if (o.kind === 'quota') {
              selector.setRemainingQuota(id, o.value);
              quota.set(id, o.value);
            } else if (o.kind === 'latency') selector.recordLatency(id, o.value);
            else if (o.kind === 'begin') selector.begin(id);
            else selector.end(id);
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  test('round robin is fair to within one pick over any run', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 50 }),
        (n, picks, warmup) => {
          const selector = new Selector(ids(n));
          pickMany(selector, warmup);
          const counts = new Map<string, number>();
          for (const id of pickMany(selector, picks)) counts.set(id, (counts.get(id) ?? 0) + 1);
          const values = ids(n).map(({ id }) => counts.get(id) ?? 0);
          assert.ok(Math.max(...values) - Math.min(...values) <= 1, `counts ${values}`);
        },
      ),
    );
  });

  test('least_busy always picks a minimum of in-flight requests', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat({ max: N - 1 })), { maxLength: 100 }), (steps) => {
        const selector = new Selector(specs, { strategy: 'least_busy' });
        const inFlight = new Map<string, number>();
        for (const [start, s] of steps) {
          const id = `p${s}`;
          if (start) {
            selector.begin(id);
            inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
          } else if ((inFlight.get(id) ?? 0) > 0) {
            selector.end(id);
            inFlight.set(id, inFlight.get(id)! - 1);
          }
          const picked = selector.select();
          const min = Math.min(...specs.map((c) => inFlight.get(c.id) ?? 0));
          assert.equal(inFlight.get(picked) ?? 0, min);
        }
      }),
    );
  });
});
