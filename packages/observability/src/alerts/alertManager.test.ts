import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import { Registry } from 'prom-client';
import { type AlertRuleConfig, alertsConfigSchema, type Channel } from '../config/schemas.js';
import { NotificationDispatcher } from '../notify/dispatcher.js';
import type { AlertNotification, Notification, Notifier } from '../notify/notification.js';
import { observeGateway } from '../observe.js';
import { attemptEnd, requestEnd } from '../testing/fixtures.js';
import { AlertManager } from './alertManager.js';

const START = Date.parse('2026-03-01T00:00:00Z');

class RecordingNotifier implements Notifier {
  readonly sent: Notification[] = [];
  constructor(readonly channel: Channel) {}
  async send(notification: Notification): Promise<void> {
    this.sent.push(notification);
  }
}

function setup(rules: AlertRuleConfig[] = alertsConfigSchema.parse({}).rules) {
  const clock = new FakeScheduler(START);
  const notifiers = { chat: new RecordingNotifier('chat'), pager: new RecordingNotifier('pager'), email: new RecordingNotifier('email') };
  const dispatcher = new NotificationDispatcher({ notifiers: Object.values(notifiers), scheduler: clock });
  const registry = new Registry();
  const alerts = new AlertManager({ rules, scheduler: clock, evaluationIntervalMs: 15_000, dispatcher, registry });
  const relay = new EventEmitter();
  const health = new EventEmitter();
  observeGateway({ relay, health }, { alerts });
  alerts.start();
  const rule = (name: string) => alerts.status().rules.find((r) => r.name === name)!;
  /** Runs `ms` of time in 5 s steps, calling `tick` at each step (to emit traffic). */
  const run = async (ms: number, tick: (now: number) => void = () => {}) => {
    for (let elapsed = 0; elapsed < ms; elapsed += 5000) {
      tick(clock.now());
      await clock.advance(5000);
    }
  };
  const alertsOn = (channel: keyof typeof notifiers) => notifiers[channel].sent.filter((n): n is AlertNotification => n.kind === 'alert');
  return { clock, notifiers, alerts, relay, health, rule, run, alertsOn, registry, dispatcher };
}

const only = (name: string) => alertsConfigSchema.parse({}).rules.filter((r) => r.name === name);

describe('each documented rule fires and resolves on a fake clock', () => {
  test('high_error_rate: error_rate > 0.05 for 5m (warning, chat + email)', async () => {
    const t = setup(only('high_error_rate'));
    const traffic = (errors: number) => (at: number) => {
      for (let i = 0; i < 10; i++)
        t.relay.emit('request:end', requestEnd({ at, outcome: i < errors ? 'error' : 'success', httpStatus: i < errors ? 502 : 200 }));
    };
    await t.run(60_000, traffic(2));
    assert.equal(t.rule('high_error_rate').state, 'pending');
    await t.run(4 * 60_000 - 15_000, traffic(2));
    assert.equal(t.rule('high_error_rate').state, 'pending', 'not yet 5 minutes');
    await t.run(30_000, traffic(2));
    const firing = t.rule('high_error_rate');
    assert.equal(firing.state, 'firing');
    assert.equal(firing.instances[0]!.values['error_rate > 0.05'], 0.2);
    await t.dispatcher.idle();
    assert.deepEqual(
      t.alertsOn('chat').map((n) => n.status),
      ['firing'],
    );
    assert.equal(t.alertsOn('email').length, 1);
    assert.equal(t.alertsOn('pager').length, 0, 'the rule does not name the pager');
    assert.equal(t.alertsOn('chat')[0]!.severity, 'warning');
    // Firing for a long time notifies once, not once per evaluation.
    await t.run(10 * 60_000, traffic(2));
    await t.dispatcher.idle();
    assert.equal(t.alertsOn('chat').length, 1);
    // Healthy traffic: once the 1m window has no errors, it resolves.
    await t.run(90_000, traffic(0));
    assert.equal(t.rule('high_error_rate').state, 'inactive');
    assert.notEqual(t.rule('high_error_rate').last_resolved_at, null);
    await t.dispatcher.idle();
    assert.deepEqual(
      t.alertsOn('chat').map((n) => n.status),
      ['firing', 'resolved'],
    );
    assert.deepEqual(
      t.alertsOn('email').map((n) => n.status),
      ['firing', 'resolved'],
    );
  });

  test('provider_down: provider_health == unhealthy for 2m (critical, chat + pager), per provider', async () => {
    const t = setup(only('provider_down'));
    t.health.emit('health:change', { provider: 'openai', status: 'healthy', previous: 'unhealthy', at: START });
    t.health.emit('health:change', { provider: 'anthropic', status: 'healthy', previous: 'unhealthy', at: START });
    await t.run(30_000);
    t.health.emit('health:change', { provider: 'openai', status: 'unhealthy', previous: 'healthy', at: t.clock.now() });
    await t.run(60_000);
    assert.equal(t.rule('provider_down').state, 'pending');
    await t.run(75_000);
    const status = t.rule('provider_down');
    assert.equal(status.state, 'firing');
    assert.deepEqual(
      status.instances.map((i) => [i.provider, i.state]),
      [['openai', 'firing']],
    );
    await t.dispatcher.idle();
    const [trigger] = t.alertsOn('pager');
    assert.equal(trigger!.severity, 'critical');
    assert.equal(trigger!.provider, 'openai');
    t.health.emit('health:change', { provider: 'openai', status: 'healthy', previous: 'unhealthy', at: t.clock.now() });
    await t.run(20_000);
    assert.equal(t.rule('provider_down').state, 'inactive');
    await t.dispatcher.idle();
    const pager = t.alertsOn('pager');
    assert.deepEqual(
      pager.map((n) => n.status),
      ['firing', 'resolved'],
    );
    assert.equal(pager[0]!.dedupKey, pager[1]!.dedupKey, 'resolve names the incident the trigger opened');
    assert.equal(t.alertsOn('chat').length, 2);
    assert.equal(t.alertsOn('email').length, 0);
  });

  test('rate_limit_exceeded: rate_limit_count > 10 for 1m (warning, chat)', async () => {
    const t = setup(only('rate_limit_exceeded'));
    // 2 rate-limited attempts every 5 s = 24 a minute.
    const limited = (at: number) => {
      t.relay.emit('attempt:end', attemptEnd({ at, outcome: 'error', httpStatus: 429, errorType: 'rate_limit' }));
      t.relay.emit('attempt:end', attemptEnd({ at, provider: 'anthropic', outcome: 'error', httpStatus: 429, errorType: 'rate_limit' }));
    };
    await t.run(30_000, limited);
    assert.equal(t.rule('rate_limit_exceeded').state, 'pending');
    await t.run(60_000, limited);
    assert.equal(t.rule('rate_limit_exceeded').state, 'firing');
    await t.run(90_000);
    assert.equal(t.rule('rate_limit_exceeded').state, 'inactive');
    await t.dispatcher.idle();
    assert.deepEqual(
      t.alertsOn('chat').map((n) => n.status),
      ['firing', 'resolved'],
    );
  });

  test('high_latency: p95_latency > 5s for 10m (warning, chat)', async () => {
    const t = setup(only('high_latency'));
    const slow = (latencyMs: number) => (at: number) => {
      for (let i = 0; i < 20; i++) t.relay.emit('request:end', requestEnd({ at, latencyMs: i === 0 ? 100 : latencyMs }));
    };
    await t.run(9 * 60_000, slow(6000));
    assert.equal(t.rule('high_latency').state, 'pending');
    await t.run(90_000, slow(6000));
    const status = t.rule('high_latency');
    assert.equal(status.state, 'firing');
    const seen = status.instances[0]!.values['p95_latency > 5s'] as number;
    assert.ok(Math.abs(seen - 6) / 6 < 0.03, `p95 ≈ 6 s, got ${seen}`);
    await t.run(90_000, slow(1000));
    assert.equal(t.rule('high_latency').state, 'inactive');
    await t.dispatcher.idle();
    assert.deepEqual(
      t.alertsOn('chat').map((n) => n.status),
      ['firing', 'resolved'],
    );
  });
});

describe('rule states', () => {
  test('a condition that stops holding before its duration goes back to inactive without a notification', async () => {
    const t = setup(only('provider_down'));
    t.health.emit('health:change', { provider: 'openai', status: 'unhealthy', previous: 'healthy', at: START });
    await t.run(60_000);
    assert.equal(t.rule('provider_down').state, 'pending');
    t.health.emit('health:change', { provider: 'openai', status: 'healthy', previous: 'unhealthy', at: t.clock.now() });
    await t.run(5 * 60_000);
    assert.equal(t.rule('provider_down').state, 'inactive');
    assert.equal(t.rule('provider_down').last_fired_at, null);
    await t.dispatcher.idle();
    assert.equal(t.notifiers.chat.sent.length + t.notifiers.pager.sent.length, 0);
  });

  test('a rule with no duration fires at the first evaluation that sees the condition', async () => {
    const rules = alertsConfigSchema.parse({ rules: [{ name: 'busy', condition: 'in_flight >= 2', notifications: ['chat'] }] }).rules;
    const t = setup(rules);
    t.relay.emit('request:start', { requestId: 'a', model: 'm', ingress: 'openai', stream: false, at: START });
    t.relay.emit('request:start', { requestId: 'b', model: 'm', ingress: 'openai', stream: false, at: START });
    await t.clock.advance(15_000);
    assert.equal(t.rule('busy').state, 'firing');
    assert.equal(t.rule('busy').instances[0]!.active_since, t.rule('busy').instances[0]!.fired_at);
  });

  test('events and svc_alerts follow the transitions', async () => {
    const t = setup(only('provider_down'));
    const seen: string[] = [];
    t.alerts.events.on('alert:pending', (a) => seen.push(`pending ${a.provider}`));
    t.alerts.events.on('alert:firing', (a) => seen.push(`firing ${a.provider}`));
    t.alerts.events.on('alert:resolved', (a) => seen.push(`resolved ${a.provider}`));
    t.health.emit('health:change', { provider: 'p1', status: 'unhealthy', previous: 'healthy', at: START });
    await t.run(150_000);
    const text = await t.registry.metrics();
    assert.match(text, /svc_alerts\{rule="provider_down",severity="critical",state="firing"\} 1/);
    t.health.emit('health:change', { provider: 'p1', status: 'healthy', previous: 'unhealthy', at: t.clock.now() });
    await t.run(15_000);
    assert.deepEqual(seen, ['pending p1', 'firing p1', 'resolved p1']);
    assert.match(await t.registry.metrics(), /svc_alerts\{rule="provider_down",severity="critical",state="firing"\} 0/);
  });

  test('status() has the shape the operations API serves', async () => {
    const t = setup();
    const status = t.alerts.status();
    assert.equal(status.evaluation_interval_ms, 15_000);
    assert.equal(status.evaluated_at, null);
    assert.deepEqual(
      status.rules.map((r) => [r.name, r.severity, r.scope, r.state, r.duration_ms]),
      [
        ['high_error_rate', 'warning', 'global', 'inactive', 300_000],
        ['provider_down', 'critical', 'provider', 'inactive', 120_000],
        ['rate_limit_exceeded', 'warning', 'global', 'inactive', 60_000],
        ['high_latency', 'warning', 'global', 'inactive', 600_000],
      ],
    );
    await t.clock.advance(15_000);
    assert.equal(t.alerts.status().evaluated_at, new Date(START + 15_000).toISOString());
    t.alerts.stop();
    await t.clock.advance(60_000);
    assert.equal(t.alerts.status().evaluated_at, new Date(START + 15_000).toISOString(), 'stop() ends the loop');
  });
});

describe('reloading rules', () => {
  test('unchanged rules keep their state and do not re-notify; removed ones resolve; new ones start inactive', async () => {
    const t = setup(only('provider_down'));
    t.health.emit('health:change', { provider: 'p1', status: 'unhealthy', previous: 'healthy', at: START });
    await t.run(150_000);
    assert.equal(t.rule('provider_down').state, 'firing');
    const rules = alertsConfigSchema.parse({
      rules: [
        {
          name: 'provider_down',
          condition: 'provider_health == unhealthy',
          duration: '2m',
          severity: 'critical',
          notifications: ['chat', 'pager'],
        },
        { name: 'busy', condition: 'in_flight > 100' },
      ],
    }).rules;
    t.alerts.setRules(rules);
    await t.run(30_000);
    assert.equal(t.rule('provider_down').state, 'firing');
    assert.equal(t.rule('busy').state, 'inactive');
    await t.dispatcher.idle();
    assert.equal(t.alertsOn('pager').length, 1, 'no second trigger after the reload');
    t.alerts.setRules(rules.filter((r) => r.name === 'busy'));
    await t.dispatcher.idle();
    assert.deepEqual(
      t.alertsOn('pager').map((n) => n.status),
      ['firing', 'resolved'],
    );
    assert.deepEqual(
      t.alerts.status().rules.map((r) => r.name),
      ['busy'],
    );
  });
});
