import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import fc from 'fast-check';
import { CooldownManager } from './cooldownManager.js';
import { FailureWindow } from './failureWindow.js';

/** The obvious implementation: keep every time, count those inside the window. */
const countWithin = (times: number[], now: number, windowMs: number) => times.filter((t) => now - t <= windowMs).length;

describe('FailureWindow: properties', () => {
  test('record() is true exactly when `capacity` failures fall within the window, as a full list of times says', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        // Small times, so failures land exactly on the window's edge often.
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constant(-1 as const)), { maxLength: 200 }),
        (capacity, windowMs, steps) => {
          const window = new FailureWindow(capacity);
          let times: number[] = [];
          let now = 0;
          for (const step of steps) {
            if (step === -1) {
              window.reset();
              times = [];
              continue;
            }
            now += step;
            times.push(now);
            assert.equal(window.record(now, windowMs), countWithin(times, now, windowMs) >= capacity);
            assert.equal(window.count(now, windowMs), Math.min(capacity, countWithin(times, now, windowMs)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('resize() keeps the most recent failures that fit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 30 }),
        (before, after, steps) => {
          const window = new FailureWindow(before);
          const times: number[] = [];
          let now = 0;
          for (const step of steps) {
            now += step;
            times.push(now);
            window.record(now, 1e9);
          }
          window.resize(after);
          assert.equal(window.count(now, 1e9), Math.min(times.length, before, after));
          now += 1;
          const kept = times.slice(-Math.min(before, after));
          assert.equal(window.record(now, 1e9), kept.length + 1 >= after);
        },
      ),
    );
  });
});

describe('CooldownManager: properties', () => {
  const key = fc.nat({ max: 2 });
  const ops = fc.array(
    fc.oneof(
      fc.record({
        op: fc.constant('advance' as const),
        ms: fc.oneof(fc.integer({ min: 0, max: 20_000 }), fc.constantFrom(1000, 2000, 3000)),
      }),
      {
        weight: 4,
        arbitrary: fc.record(
          {
            op: fc.constant('fail' as const),
            key,
            kind: fc.constantFrom('rate_limit' as const, 'error' as const),
            retryAfterMs: fc.integer({ min: 0, max: 60_000 }),
          },
          { requiredKeys: ['op', 'key', 'kind'] },
        ),
      },
      fc.record({ op: fc.constant('success' as const), key }),
      fc.record({ op: fc.constant('recover' as const), key }),
    ),
    { maxLength: 150 },
  );

  test('a key cools exactly when a model with full lists of failure times says so, never before the threshold', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.oneof(fc.integer({ min: 1000, max: 30_000 }), fc.constantFrom(3000, 6000)),
        ops,
        (threshold, windowMs, steps) => {
          const clock = new FakeScheduler(1_000_000);
          const durations = { rateLimitMs: 7000, errorMs: 3000, maxRetryAfterMs: 45_000 };
          const manager = new CooldownManager({
            scheduler: clock,
            detection: { windowMs, errorThreshold: threshold },
            defaultDurations: durations,
          });
          const model = [0, 1, 2].map(() => ({ rate_limit: [] as number[], error: [] as number[], retryUntil: 0, endsAt: 0 }));
          for (const step of steps) {
            const now = clock.now();
            if (step.op === 'advance') {
              clock.set(now + step.ms);
            } else if (step.op === 'fail') {
              const m = model[step.key]!;
              const retryUntil = step.retryAfterMs === undefined ? 0 : now + Math.min(step.retryAfterMs, durations.maxRetryAfterMs);
              const started = manager.recordFailure(`k${step.key}`, step);
              if (now < m.endsAt) {
                assert.equal(started, undefined, 'a cooling key starts nothing');
                m.endsAt = Math.max(m.endsAt, retryUntil);
              } else {
                m.retryUntil = Math.max(m.retryUntil, retryUntil);
                m[step.kind].push(now);
                if (countWithin(m[step.kind], now, windowMs) >= threshold) {
                  const length = step.kind === 'rate_limit' ? durations.rateLimitMs : durations.errorMs;
                  m.endsAt = Math.max(now + length, m.retryUntil);
                  assert.deepEqual(started, { key: `k${step.key}`, reason: step.kind, startedAt: now, endsAt: m.endsAt });
                  m.rate_limit = [];
                  m.error = [];
                  m.retryUntil = 0;
                } else {
                  assert.equal(started, undefined, 'below the threshold nothing starts');
                }
              }
            } else if (step.op === 'success') {
              manager.recordSuccess(`k${step.key}`);
            } else {
              const m = model[step.key]!;
              assert.equal(manager.recover(`k${step.key}`), now < m.endsAt);
              Object.assign(m, { rate_limit: [], error: [], retryUntil: 0, endsAt: 0 });
            }
            for (let k = 0; k < 3; k++) {
              const m = model[k]!;
              assert.equal(manager.isCooling(`k${k}`), clock.now() < m.endsAt, `k${k} at ${clock.now()}`);
              if (clock.now() < m.endsAt) assert.equal(manager.period(`k${k}`)?.endsAt, m.endsAt);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
