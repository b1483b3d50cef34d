import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requirePromtool } from '@switchyard/test-support';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { sampleRollup } from '../contract.js';
import { requestEnd } from '../testing/fixtures.js';
import { UsageMetrics } from './usageMetrics.js';
import { csvField, UsageQuery, usageCsv } from './usageQuery.js';
import { UsageRecorder } from './usageRecorder.js';
import { MemoryUsageStore } from './usageStore.js';

const promtool = requirePromtool();
const T0 = Date.parse('2026-03-01T12:00:00Z');

/** An RFC 4180 reader, as a spreadsheet would read the export (the test's oracle, not the code under test). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  assert.equal(field, '', 'the export ends with a line end');
  return rows;
}

test('a CSV field reads back as itself (a formula-looking text gets a leading quote mark)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (text) => {
      const [[read]] = parseCsv(`${csvField(text)}\r\n`) as [[string]];
      assert.equal(read, /^[=+\-@\t\r]/.test(text) ? `'${text}` : text);
    }),
  );
});

test('the report: totals per group, the series they sum, and a CSV export with a header row', async () => {
  const store = new MemoryUsageStore();
  await store.add([
    sampleRollup({ minute: T0, keyId: 'static:a', keyName: 'ci, "nightly"', requests: 2, cost: 0.1 }),
    sampleRollup({ minute: T0 + 60_000, keyId: 'static:a', keyName: 'ci, "nightly"', requests: 1, cost: 0.2 }),
    sampleRollup({ minute: T0, keyId: 'static:b', keyName: '=cmd|calc', requests: 5, errors: 2 }),
  ]);
  let flushed = 0;
  const query = new UsageQuery({
    store,
    beforeRead: async () => {
      flushed++;
    },
  });
  const report = await query.report({ from: T0, to: T0 + 120_000, groupBy: 'key', stepMs: 60_000 });
  assert.equal(flushed, 1, 'the recorder is flushed before the read');
  assert.equal(report.from, '2026-03-01T12:00:00.000Z');
  assert.equal(report.step_seconds, 60);
  assert.deepEqual(
    report.groups.map((g) => [g.group, g.label, g.requests, g.errors, g.cost]),
    [
      ['static:b', '=cmd|calc', 5, 2, 0.25],
      ['static:a', 'ci, "nightly"', 3, 0, 0.3],
    ],
  );
  assert.equal(report.total.requests, 8);
  assert.equal(report.total.cost, 0.55);
  assert.deepEqual(
    report.series.map((p) => [p.start, p.group, p.requests]),
    [
      ['2026-03-01T12:00:00.000Z', 'static:a', 2],
      ['2026-03-01T12:00:00.000Z', 'static:b', 5],
      ['2026-03-01T12:01:00.000Z', 'static:a', 1],
    ],
  );
  const csv = parseCsv(usageCsv(report));
  assert.deepEqual(csv[0], [
    'start',
    'group_by',
    'group',
    'label',
    'requests',
    'errors',
    'cache_hits',
    'input_tokens',
    'output_tokens',
    'cost',
  ]);
  assert.deepEqual(csv[1], ['2026-03-01T12:00:00.000Z', 'key', 'static:a', 'ci, "nightly"', '2', '0', '0', '10', '20', '0.1']);
  assert.equal(csv[2]![3], "'=cmd|calc", 'a formula is defused');
  assert.equal(csv.length, 4);
});

test('per-tenant and per-key metrics: keys past the limit fold into other; promtool accepts the output', async () => {
  const registry = new Registry();
  const metrics = new UsageMetrics({ registry, maxKeyLabels: 2, maxTenantLabels: 2 });
  const recorder = new UsageRecorder({
    store: new MemoryUsageStore(),
    tokenPrice: () => ({ input: 1, output: 1 }),
    onCounted: (request) => metrics.count(request),
  });
  for (let i = 0; i < 5; i++) {
    recorder.record(
      requestEnd({ client: { keyId: `static:k${i}`, name: `k${i}`, tenant: `t${i % 3}` }, tokens: { input: 1000, output: 0 } }),
    );
  }
  recorder.record(requestEnd({ client: null, outcome: 'error', tokens: { input: 0, output: 0 } }));
  const text = await registry.metrics();
  const series = (name: string) => text.split('\n').filter((line) => line.startsWith(`${name}{`));
  assert.deepEqual(
    series('svc_client_key_requests_total').filter((l) => l.includes('status="success"')),
    [
      'svc_client_key_requests_total{key="static:k0",status="success"} 1',
      'svc_client_key_requests_total{key="static:k1",status="success"} 1',
      'svc_client_key_requests_total{key="other",status="success"} 3',
    ],
  );
  assert.ok(text.includes('svc_client_key_requests_total{key="other",status="error"} 1'), 'the anonymous client folds too');
  // `default` is always labelled; two more tenants, then `other`.
  assert.deepEqual(series('svc_tenant_cost_total'), [
    'svc_tenant_cost_total{tenant="t0"} 2',
    'svc_tenant_cost_total{tenant="t1"} 2',
    'svc_tenant_cost_total{tenant="other"} 1',
  ]);
  assert.ok(text.includes('svc_tenant_requests_total{tenant="default",status="error"} 1'));
  assert.deepEqual(metrics.foldedLabels(), { tenant: 1, key: 4 });
  const labelled = new Set(text.split('\n').flatMap((l) => [...l.matchAll(/key="([^"]+)"/g)].map((m) => m[1])));
  assert.ok(labelled.size <= 3, 'at most max_key_labels keys plus other');
});

test('promtool check metrics passes on the usage metrics', { skip: promtool.skip }, async () => {
  if (!promtool.available) return;
  const registry = new Registry();
  const metrics = new UsageMetrics({ registry, maxKeyLabels: 1 });
  const recorder = new UsageRecorder({ store: new MemoryUsageStore(), onCounted: (request) => metrics.count(request) });
  recorder.record(requestEnd({ client: { keyId: 'static:a "quoted" key', name: 'a', tenant: 'team\\a' }, cached: true }));
  recorder.record(requestEnd({ client: { keyId: 'static:b', name: 'b', tenant: 'team-b' }, outcome: 'client_closed' }));
  const text = await registry.metrics();
  assert.match(text, /svc_client_key_cache_hits_total\{key="static:a \\"quoted\\" key"\} 1/);
  assert.doesNotThrow(() => promtool.checkMetrics(text));
});
