/**
 * Benchmark of @switchyard/core-routing.
 *
 * 1. Selection: picks per second at 1,000 candidates for every strategy,
 *    against a bare `array[i++ % n]` in the same run, and with the feedback
 *    each strategy lives on (quota deductions, latency samples, in-flight
 *    counts).
 * 2. Per-request bookkeeping of cooldowns and health at 10 and at 10,000
 *    keys, against a `Map` get + set per request at the same size: O(1) shows
 *    as the same ratio at both sizes.
 *
 *   pnpm bench core-routing [--smoke]
 */
import { CooldownManager, HealthMonitor, Selector, STRATEGIES } from '@switchyard/core-routing';
import { FakeScheduler } from '@switchyard/runtime';
import { type Row, report, throughput } from './lib.js';

const N = 1000;
const BATCH = 10_000;
const candidates = Array.from({ length: N }, (_, i) => ({
  id: `provider-${i}`,
  priority: i % 10,
  weight: (i % 5) + 1,
  costPer1k: { input: (i % 17) / 10, output: (i % 13) / 5 },
}));

const ids = candidates.map((c) => c.id);
let cursor = 0;
let sink = '';
const baseline = throughput(() => {
  for (let i = 0; i < BATCH; i++) sink = ids[cursor++ % N]!;
  return BATCH;
});

const rows: Row[] = [{ name: `baseline: ids[i++ % ${N}]`, value: baseline, unit: 'picks/s' }];
for (const strategy of STRATEGIES) {
  const selector = new Selector(candidates, { strategy });
  for (let i = 0; i < N; i++) {
    selector.setRemainingQuota(ids[i]!, 1_000_000 + i);
    selector.recordLatency(ids[i]!, 100 + (i % 37));
  }
  // Every 10th candidate cooling down, as in a bad hour.
  for (let i = 0; i < N; i += 10) selector.markUnavailable(ids[i]!, 'cooldown', Date.now() + 3_600_000);
  const picks = throughput(() => {
    for (let i = 0; i < BATCH; i++) sink = selector.select();
    return BATCH;
  });
  rows.push({ name: `${strategy}: select()`, value: picks, unit: 'picks/s', baseline, target: '≥ 1,000,000/s', pass: picks >= 1_000_000 });
  const withFeedback = throughput(() => {
    for (let i = 0; i < BATCH; i++) {
      const id = selector.select();
      if (strategy === 'quota_aware') selector.setRemainingQuota(id, 1_000_000 - i);
      else if (strategy === 'latency') selector.recordLatency(id, 100 + (i % 50));
      else if (strategy === 'least_busy') {
        selector.begin(id);
        selector.end(id);
      }
      sink = id;
    }
    return BATCH;
  });
  rows.push({ name: `${strategy}: select() + its feedback`, value: withFeedback, unit: 'picks/s', baseline });
}
if (sink === '') throw new Error('unreachable');
report(`core-routing selection at ${N} candidates`, rows);

// ---- per-request bookkeeping ---------------------------------------------------

let checksum = 0;
const bookkeeping: Row[] = [];
for (const size of [10, 10_000]) {
  const keys = Array.from({ length: size }, (_, i) => `provider-${i}`);
  let k = 0;
  const counts = new Map(keys.map((key) => [key, 0]));
  const baselineOps = throughput(() => {
    for (let i = 0; i < BATCH; i++) {
      const key = keys[k++ % size]!;
      counts.set(key, counts.get(key)! + 1);
    }
    return BATCH;
  });
  bookkeeping.push({ name: `baseline: Map get + set, ${size} keys`, value: baselineOps, unit: 'ops/s' });

  const cooldowns = new CooldownManager();
  // Every key has counters (one earlier failure), as keys of a live gateway do.
  for (const key of keys) cooldowns.recordFailure(key, { kind: 'error' });
  const success = throughput(() => {
    for (let i = 0; i < BATCH; i++) {
      const key = keys[k++ % size]!;
      if (!cooldowns.isCooling(key)) cooldowns.recordSuccess(key);
    }
    return BATCH;
  });
  bookkeeping.push({ name: `cooldown: isCooling + recordSuccess, ${size} keys`, value: success, unit: 'ops/s', baseline: baselineOps });

  // Failures below the threshold: a clock that moves 2 ms per failure and a 1 ms window, so
  // the ring does all its work but no cooldown starts (that is a rare event, not per request).
  const clock = new FakeScheduler(0);
  const counting = new CooldownManager({ scheduler: clock, detection: { windowMs: 1, errorThreshold: 5 } });
  let t = 0;
  const failure = { kind: 'error', status: 503 } as const;
  const failures = throughput(() => {
    for (let i = 0; i < BATCH; i++) {
      clock.set((t += 2));
      if (counting.recordFailure(keys[k++ % size]!, failure)) throw new Error('a cooldown started; the benchmark setup is wrong');
    }
    return BATCH;
  });
  bookkeeping.push({
    name: `cooldown: recordFailure (counted, below threshold), ${size} keys`,
    value: failures,
    unit: 'ops/s',
    baseline: baselineOps,
  });

  const cooling = new CooldownManager();
  for (const key of keys) cooling.cooldown(key, 3_600_000);
  const coolingChecks = throughput(() => {
    for (let i = 0; i < BATCH; i++) checksum += cooling.isCooling(keys[k++ % size]!) ? 1 : 0;
    return BATCH;
  });
  bookkeeping.push({
    name: `cooldown: isCooling on cooling keys, ${size} keys`,
    value: coolingChecks,
    unit: 'ops/s',
    baseline: baselineOps,
  });

  const health = new HealthMonitor({ providers: keys, probe: async () => {} });
  const sample = { ok: true, latencyMs: 120 };
  const requests = throughput(() => {
    for (let i = 0; i < BATCH; i++) health.recordRequest(keys[k++ % size]!, sample);
    return BATCH;
  });
  bookkeeping.push({ name: `health: recordRequest, ${size} providers`, value: requests, unit: 'ops/s', baseline: baselineOps });
  checksum += health.providerStatus(keys[0]!).requests_last_minute;
}
if (checksum < 0) throw new Error('unreachable');
report('core-routing bookkeeping per request (O(1): same ratio at 10 and 10,000 keys)', bookkeeping);
