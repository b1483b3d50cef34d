import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { CellHistogram } from './cellHistogram.js';

const BUCKETS = [0.005, 0.05, 0.5, 1, 2.5, 10];

test("the exposition is prom-client's own Histogram's, byte for byte, for any observations", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.constantFrom('openai', 'anthropic', 'a"b\\c'), fc.double({ min: 0, max: 30, noNaN: true })), { maxLength: 80 }),
      async (observations) => {
        const real = new Registry();
        const ours = new Registry();
        const reference = new Histogram({
          name: 'x_seconds',
          help: 'Latency.',
          labelNames: ['provider'],
          buckets: BUCKETS,
          registers: [real],
        });
        const cells = new CellHistogram({
          name: 'x_seconds',
          help: 'Latency.',
          labelNames: ['provider'],
          buckets: BUCKETS,
          registers: [ours],
        });
        const series = new Map<string, ReturnType<typeof cells.labels>>();
        for (const [provider, value] of observations) {
          reference.observe({ provider }, value);
          if (!series.has(provider)) series.set(provider, cells.labels({ provider }));
          series.get(provider)!.observe(value);
        }
        // Series appear in the order they were first observed in both.
        assert.equal(await ours.metrics(), await real.metrics());
        // And the JSON form (as serialized: prom-client leaves `exemplar: undefined` on _sum and _count).
        assert.deepEqual(
          JSON.parse(JSON.stringify(await ours.getMetricsAsJSON())),
          JSON.parse(JSON.stringify(await real.getMetricsAsJSON())),
        );
      },
    ),
  );
});

/** A registry with one histogram and its `provider="openai"` series. */
function openaiSeries() {
  const registry = new Registry();
  const cells = new CellHistogram({
    name: 'x_seconds',
    help: 'Latency.',
    labelNames: ['provider'],
    buckets: BUCKETS,
    registers: [registry],
  });
  return { registry, series: cells.labels({ provider: 'openai' }) };
}

test('a non-finite observation is ignored rather than thrown or summed', async () => {
  const { registry, series } = openaiSeries();
  series.observe(Number.NaN);
  series.observe(Number.POSITIVE_INFINITY);
  series.observe(0.2);
  const text = await registry.metrics();
  assert.match(text, /x_seconds_count\{provider="openai"\} 1\n/);
  assert.match(text, /x_seconds_sum\{provider="openai"\} 0.2\n/);
});

test('resetMetrics zeroes every series, and the series callers hold keep counting', async () => {
  const { registry, series } = openaiSeries();
  series.observe(1);
  registry.resetMetrics();
  assert.match(await registry.metrics(), /x_seconds_count\{provider="openai"\} 0\n/);
  series.observe(3);
  assert.match(
    await registry.metrics(),
    /x_seconds_bucket\{le="2.5",provider="openai"\} 0\nx_seconds_bucket\{le="10",provider="openai"\} 1\n/,
  );
});

test('a series without every label is refused, as prom-client refuses it', () => {
  const cells = new CellHistogram({ name: 'x_seconds', help: 'Latency.', labelNames: ['provider'], buckets: BUCKETS, registers: [] });
  assert.throws(() => cells.labels({} as { provider: string }), /label provider is missing/);
});
