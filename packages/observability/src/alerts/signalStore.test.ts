import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import fc from 'fast-check';
import { requestEnd } from '../testing/fixtures.js';
import { parseCondition } from './expression.js';
import { binOf, binValue, LOG_HISTOGRAM_BINS, quantileOf } from './logHistogram.js';
import { SignalStore } from './signalStore.js';

const ref = (source: string) => parseCondition(source).signals[0]!;

test('windows count only recent events, per provider and service-wide', async () => {
  const clock = new FakeScheduler(1_000_000);
  const store = new SignalStore({ clock, horizonMs: 600_000 });
  store.onRequestEnd(requestEnd({ provider: 'a', outcome: 'error' }));
  await clock.advance(30_000);
  store.onRequestEnd(requestEnd({ provider: 'b' }));
  store.onRequestEnd(requestEnd({ provider: null, outcome: 'error' }));
  assert.equal(store.read(ref('request_count > 0'), null), 3);
  assert.equal(store.read(ref('error_rate > 0'), null), 2 / 3);
  assert.equal(store.read(ref('error_rate > 0'), 'a'), 1);
  assert.equal(store.read(ref('error_rate > 0'), 'b'), 0);
  assert.equal(store.read(ref('request_rate > 0'), null), 3 / 60);
  await clock.advance(40_000); // the first request is now 70 s old
  assert.equal(store.read(ref('request_count > 0'), null), 2);
  assert.equal(store.read(ref('request_count[5m] > 0'), null), 3);
  assert.equal(store.read(ref('error_rate > 0'), 'a'), undefined, 'no requests in the window: no data');
  assert.equal(store.read(ref('error_count > 0'), 'never-seen'), 0, 'a count without events is 0');
  assert.deepEqual(store.providers().sort(), ['a', 'b']);
});

test('cooldowns, quota and in-flight are current state', () => {
  const clock = new FakeScheduler(0);
  const store = new SignalStore({ clock });
  store.onCooldownStart({ key: 'openai/k1', reason: 'rate_limit', startedAt: 0, endsAt: 60_000 });
  store.onCooldownStart({ key: 'anthropic', reason: 'error', startedAt: 0, endsAt: 10_000 });
  assert.equal(store.read(ref('active_cooldowns > 0'), null), 2);
  assert.equal(store.read(ref('active_cooldowns > 0 by provider'), 'openai'), 1);
  clock.set(20_000);
  assert.equal(store.read(ref('active_cooldowns > 0'), null), 1, 'an expired cooldown no longer counts');
  store.onQuotaUpdate({ provider: 'openai', credentialId: 'k1', limit: 100, used: 90, remaining: 10 });
  store.onQuotaUpdate({ provider: 'openai', credentialId: 'k2', limit: 100, used: 20, remaining: 80 });
  assert.equal(store.read(ref('quota_remaining < 1'), 'openai'), 10);
  store.onRequestStart({ requestId: 'r', model: 'm', ingress: 'i', stream: true, client: null, at: 0 });
  assert.equal(store.read(ref('in_flight > 0'), null), 1);
});

test('log-histogram quantiles are within 2.5% of the exact ones (property)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 2, max: 3_600_000 }), { minLength: 1, maxLength: 300 }),
      fc.double({ min: 0.01, max: 0.99, noNaN: true }),
      (values, q) => {
        const counts = new Float64Array(LOG_HISTOGRAM_BINS);
        for (const v of values) counts[binOf(v)]!++;
        const sorted = [...values].sort((a, b) => a - b);
        const exact = sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
        const estimate = quantileOf(counts, q)!;
        assert.ok(Math.abs(estimate - exact) / exact <= 0.025, `${estimate} vs ${exact}`);
      },
    ),
  );
  assert.equal(binValue(0), 1);
  assert.equal(quantileOf(new Float64Array(LOG_HISTOGRAM_BINS), 0.5), undefined);
});
