import assert from 'node:assert/strict';
import { test } from 'node:test';
import { observabilityConfigSchema } from './schemas.js';

const issues = (input: unknown) => {
  const result = observabilityConfigSchema.safeParse(input);
  assert.equal(result.success, false);
  return result.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

test('an empty config gets the documented defaults', () => {
  const config = observabilityConfigSchema.parse({});
  assert.deepEqual(
    { enabled: config.metrics.enabled, port: config.metrics.port, path: config.metrics.path },
    { enabled: true, port: 9090, path: '/metrics' },
  );
  assert.equal(config.logging.level, 'info');
  assert.equal(config.logging.format, 'json');
  assert.equal(config.logging.output, 'stdout');
  assert.deepEqual(config.logging.rotation, { enabled: true, max_size: 100 * 1024 ** 2, max_age: 30 * 86_400_000, max_backups: 10 });
  assert.equal(config.tracing.sample_rate, 0.1);
  assert.equal(config.tracing.enabled, false);
  assert.equal(config.tracing.endpoint, 'http://127.0.0.1:4318/v1/traces');
  assert.equal(config.alerts.evaluation_interval, 15_000);
});

test('the default rules are the four documented ones: warning, critical, warning, warning', () => {
  const { rules } = observabilityConfigSchema.parse({}).alerts;
  assert.deepEqual(
    rules.map((r) => [r.condition, r.duration, r.severity]),
    [
      ['error_rate > 0.05', 300_000, 'warning'],
      ['provider_health == unhealthy', 120_000, 'critical'],
      ['rate_limit_count > 10', 60_000, 'warning'],
      ['p95_latency > 5s', 600_000, 'warning'],
    ],
  );
  assert.ok(rules.every((r) => r.notifications.every((c) => ['chat', 'pager', 'email'].includes(c))));
});

test('durations and sizes are accepted as written and come out as numbers', () => {
  const config = observabilityConfigSchema.parse({
    logging: { output: 'file', file: '/tmp/x.log', rotation: { max_size: '10M', max_age: '7d', max_backups: 3 } },
    alerts: { evaluation_interval: '30s', rules: [{ name: 'r', condition: 'in_flight > 100', duration: '1m30s' }] },
    tracing: { exporter: 'zipkin' },
  });
  assert.equal(config.logging.rotation.max_size, 10 * 1024 ** 2);
  assert.equal(config.logging.rotation.max_age, 7 * 86_400_000);
  assert.equal(config.alerts.evaluation_interval, 30_000);
  assert.equal(config.alerts.rules[0]!.duration, 90_000);
  assert.equal(config.tracing.endpoint, 'http://127.0.0.1:9411/api/v2/spans');
  // Output parses again to the same thing (servers re-validate what they show).
  assert.deepEqual(observabilityConfigSchema.parse(config), config);
});

test('every bad field is reported with its path', () => {
  const found = issues({
    metrics: { port: 70_000 },
    logging: { level: 'verbose', rotation: { max_size: '10Q' } },
    tracing: { exporter: 'datadog', sample_rate: 2 },
    alerts: {
      rules: [
        { name: 'a', condition: 'error_rate >> 3' },
        { name: 'a', condition: 'provider_health > 1' },
        { name: 'b', condition: 'nonsense > 1', notifications: ['sms'] },
      ],
    },
    notifications: { chat: { enabled: true }, pager: { enabled: true }, email: { enabled: true, smtp_server: 'ftp://x', from: 'a@b.c' } },
  });
  const expectPath = (prefix: string) =>
    assert.ok(
      found.some((f) => f.startsWith(prefix)),
      `${prefix} in ${found.join('\n')}`,
    );
  expectPath('metrics.port');
  expectPath('logging.level');
  expectPath('logging.rotation.max_size: "10Q" is not a size');
  expectPath('tracing.exporter');
  expectPath('tracing.sample_rate');
  expectPath('alerts.rules.0.condition: expected a number for error_rate at column 13');
  expectPath('alerts.rules.1.condition: provider_health compares only with == or !=');
  expectPath('alerts.rules.2.condition: unknown signal "nonsense"');
  expectPath('alerts.rules.2.notifications.0');
  expectPath('alerts.rules.1.name: duplicate rule name');
  expectPath('notifications.chat.webhook_url: webhook_url is required when enabled');
  expectPath('notifications.pager.service_key');
  expectPath('notifications.email.smtp_server');
  expectPath('notifications.email.to');
});

test('secrets never appear in validation messages', () => {
  const found = issues({
    notifications: { email: { enabled: true, smtp_server: 'ftp://user:hunter2@mail', from: 'a@b.c', to: ['x@y.z'] } },
  });
  assert.ok(found.length > 0);
  assert.ok(!found.join('\n').includes('hunter2'));
});
