import { createObservability } from '@switchyard/observability';
import { EventEmitter } from 'eventemitter3';

// Stand-ins for the relay's and the health monitor's emitters.
const relay = new EventEmitter();
const health = new EventEmitter();

const obs = createObservability({
  metrics: { port: 0, process_metrics: false },
  logging: { level: 'info' },
  alerts: { rules: [{ name: 'provider_down', condition: 'provider_health == unhealthy', severity: 'critical' }] },
});
const detach = obs.observeGateway({ relay, health });
await obs.start();

const at = Date.now();
relay.emit('request:start', { requestId: 'req-1', model: 'gpt-4o', ingress: 'openai', stream: false, at });
relay.emit('request:end', {
  requestId: 'req-1',
  model: 'gpt-4o',
  provider: 'openai',
  credentialId: 'key-1',
  outcome: 'success',
  httpStatus: 200,
  errorType: null,
  latencyMs: 840,
  ttfbMs: 210,
  tokens: { input: 12, output: 48 },
  cached: false,
  attempts: 1,
  at,
});
health.emit('health:change', { provider: 'openai', status: 'unhealthy', previous: 'healthy', at });
obs.alerts?.evaluate();

const { port } = obs.metricsServer!.address()!;
const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
console.log(
  metrics
    .split('\n')
    .filter((line) => line.startsWith('svc_requests_total'))
    .join('\n'),
);
console.log(
  obs
    .alertsReport()
    .rules.map((rule) => `${rule.name}: ${rule.state}`)
    .join('\n'),
);

detach();
await obs.stop();
