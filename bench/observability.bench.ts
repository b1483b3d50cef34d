/**
 * Benchmark of @switchyard/observability: what observing one request costs.
 * Each round emits the relay's `request:start`, one `attempt:end` and
 * `request:end` for a request, through an emitter (node:events here; the
 * relay's eventemitter3 dispatches the same way), and measures requests per
 * second with:
 *   - both off (the baseline: the same emits, no listeners);
 *   - svc_* metrics only;
 *   - JSON request logs only (to a rotated file, buffered as in production);
 *   - metrics + logs;
 *   - metrics + logs + the alert signal store;
 *   - usage accounting (`UsageRecorder`: per-minute rollups by key, tenant, provider and model, in memory;
 *     its batched store write is off the request path and not part of the loop), alone and with its
 *     bounded per-tenant and per-key metrics. Requests come from 500 client keys in 20 tenants.
 * The overhead per request is the difference of the inverse throughputs.
 *
 *   pnpm bench observability [--smoke]
 */

import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AlertManager,
  createLogger,
  GatewayMetrics,
  MemoryUsageStore,
  type ObserverSinks,
  observeGateway,
  UsageMetrics,
  UsageRecorder,
} from '@switchyard/observability';
import { alertsConfigSchema, loggingConfigSchema } from '@switchyard/observability/config';
import { type Row, report, SMOKE, throughput } from './lib.js';

const BATCH = SMOKE ? 200 : 2000;
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet', 'gemini-pro'];
const PROVIDERS = ['openai', 'anthropic', 'gemini'];
const CLIENTS = Array.from({ length: 500 }, (_, i) => ({ keyId: `static:key-${i}`, name: `key-${i}`, tenant: `tenant-${i % 20}` }));
const dir = mkdtempSync(join(tmpdir(), 'obs-bench-'));

function measure(sinks: ObserverSinks | null, attach?: (relay: EventEmitter) => () => void): number {
  const relay = new EventEmitter();
  const detachSinks = sinks ? observeGateway({ relay }, sinks) : () => {};
  const detachExtra = attach ? attach(relay) : () => {};
  const detach = () => {
    detachSinks();
    detachExtra();
  };
  let n = 0;
  const rate = throughput(() => {
    for (let i = 0; i < BATCH; i++, n++) {
      const requestId = `req-${n}`;
      const model = MODELS[n % MODELS.length]!;
      const provider = PROVIDERS[n % PROVIDERS.length]!;
      const at = Date.now();
      const failed = n % 50 === 0;
      const client = CLIENTS[n % CLIENTS.length]!;
      relay.emit('request:start', { requestId, model, ingress: 'openai', stream: false, client, at });
      relay.emit('attempt:end', {
        requestId,
        provider,
        credentialId: 'key-1',
        attempt: 1,
        outcome: failed ? 'error' : 'success',
        httpStatus: failed ? 429 : 200,
        errorType: failed ? 'rate_limit' : null,
        latencyMs: 700,
        at,
      });
      relay.emit('request:end', {
        requestId,
        model,
        client,
        provider,
        credentialId: 'key-1',
        outcome: failed ? 'error' : 'success',
        httpStatus: failed ? 429 : 200,
        errorType: failed ? 'rate_limit' : null,
        latencyMs: 800 + (n % 400),
        ttfbMs: 150,
        tokens: { input: 120, output: 340 },
        cached: false,
        attempts: 1,
        at,
      });
    }
    return BATCH;
  });
  detach();
  return rate;
}

function logger(name: string) {
  return createLogger(
    loggingConfigSchema.parse({ output: 'file', file: join(dir, `${name}.log`), rotation: { max_size: '64M', max_backups: 1 } }),
  );
}

const baseline = measure(null);
const metricsOnly = measure({ metrics: new GatewayMetrics() });
const logsHandle = logger('logs');
const logsOnly = measure({ logger: logsHandle.logger });
const bothHandle = logger('both');
const both = measure({ metrics: new GatewayMetrics(), logger: bothHandle.logger });
const allHandle = logger('all');
const alerts = new AlertManager({ rules: alertsConfigSchema.parse({}).rules });
const all = measure({ metrics: new GatewayMetrics(), logger: allHandle.logger, alerts });
/** Usage accounting on the relay's events; the flush interval is longer than the run, so only counting is measured. */
function usage(withMetrics: boolean) {
  return (relay: EventEmitter) => {
    const metrics = withMetrics ? new UsageMetrics({ maxKeyLabels: 100 }) : undefined;
    const recorder = new UsageRecorder({
      store: new MemoryUsageStore(),
      flushIntervalMs: 3_600_000,
      tokenPrice: () => ({ input: 2.5, output: 10 }),
      ...(metrics ? { onCounted: (request) => metrics.count(request) } : {}),
    });
    const detach = recorder.attach(relay);
    return () => {
      detach();
      void recorder.close();
    };
  };
}
const usageOnly = measure(null, usage(false));
const usageWithMetrics = measure(null, usage(true));
const metricsAndUsage = measure({ metrics: new GatewayMetrics() }, usage(true));
await Promise.all([logsHandle.close(), bothHandle.close(), allHandle.close()]);
rmSync(dir, { recursive: true, force: true });

const overheadUs = (rate: number) => (1 / rate - 1 / baseline) * 1e6;
const rows: Row[] = [
  { name: 'baseline: the three emits, observability off', value: baseline, unit: 'req/s' },
  { name: 'svc_* metrics', value: metricsOnly, unit: 'req/s', baseline },
  { name: 'JSON request log (rotated file)', value: logsOnly, unit: 'req/s', baseline },
  { name: 'metrics + log', value: both, unit: 'req/s', baseline },
  { name: 'metrics + log + alert inputs', value: all, unit: 'req/s', baseline },
  { name: 'usage accounting (rollups in memory)', value: usageOnly, unit: 'req/s', baseline },
  { name: 'usage accounting + per-tenant/per-key metrics', value: usageWithMetrics, unit: 'req/s', baseline },
  { name: 'svc_* metrics + usage accounting + its metrics', value: metricsAndUsage, unit: 'req/s', baseline },
  { name: 'overhead per request: metrics', value: overheadUs(metricsOnly), unit: 'µs' },
  { name: 'overhead per request: usage accounting', value: overheadUs(usageOnly), unit: 'µs' },
  { name: 'overhead per request: usage accounting + its metrics', value: overheadUs(usageWithMetrics), unit: 'µs' },
  { name: 'overhead per request: log', value: overheadUs(logsOnly), unit: 'µs' },
  { name: 'overhead per request: metrics + log', value: overheadUs(both), unit: 'µs' },
  { name: 'overhead per request: metrics + log + alerts', value: overheadUs(all), unit: 'µs' },
];
report('observability: per-request cost of metrics, logs and usage accounting', rows);
