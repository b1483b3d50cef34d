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
 *   - metrics + logs + the alert signal store.
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
  alertsConfigSchema,
  createLogger,
  GatewayMetrics,
  loggingConfigSchema,
  type ObserverSinks,
  observeGateway,
} from '@switchyard/observability';
import { type Row, report, SMOKE, throughput } from './lib.js';

const BATCH = SMOKE ? 200 : 2000;
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet', 'gemini-pro'];
const PROVIDERS = ['openai', 'anthropic', 'gemini'];
const dir = mkdtempSync(join(tmpdir(), 'obs-bench-'));

function measure(sinks: ObserverSinks | null): number {
  const relay = new EventEmitter();
  const detach = sinks ? observeGateway({ relay }, sinks) : () => {};
  let n = 0;
  const rate = throughput(() => {
    for (let i = 0; i < BATCH; i++, n++) {
      const requestId = `req-${n}`;
      const model = MODELS[n % MODELS.length]!;
      const provider = PROVIDERS[n % PROVIDERS.length]!;
      const at = Date.now();
      const failed = n % 50 === 0;
      relay.emit('request:start', { requestId, model, ingress: 'openai', stream: false, at });
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
await Promise.all([logsHandle.close(), bothHandle.close(), allHandle.close()]);
rmSync(dir, { recursive: true, force: true });

const overheadUs = (rate: number) => (1 / rate - 1 / baseline) * 1e6;
const rows: Row[] = [
  { name: 'baseline: the three emits, observability off', value: baseline, unit: 'req/s' },
  { name: 'svc_* metrics', value: metricsOnly, unit: 'req/s', baseline },
  { name: 'JSON request log (rotated file)', value: logsOnly, unit: 'req/s', baseline },
  { name: 'metrics + log', value: both, unit: 'req/s', baseline },
  { name: 'metrics + log + alert inputs', value: all, unit: 'req/s', baseline },
  { name: 'overhead per request: metrics', value: overheadUs(metricsOnly), unit: 'µs' },
  { name: 'overhead per request: log', value: overheadUs(logsOnly), unit: 'µs' },
  { name: 'overhead per request: metrics + log', value: overheadUs(both), unit: 'µs' },
  { name: 'overhead per request: metrics + log + alerts', value: overheadUs(all), unit: 'µs' },
];
report('observability: per-request cost of metrics and logs', rows);
