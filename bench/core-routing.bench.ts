/**
 * Benchmark of @switchyard/core-routing selection: picks per second at 1,000
 * candidates for every strategy, against a bare `array[i++ % n]` in the same
 * run, and with the feedback each strategy lives on (quota deductions,
 * latency samples, in-flight counts).
 *
 *   pnpm bench core-routing [--smoke]
 */
import { Selector, STRATEGIES } from '@switchyard/core-routing';
import { type Row, report, SMOKE, throughput } from './lib.js';

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
report(`core-routing selection at ${N} candidates${SMOKE ? '' : ''}`, rows);
