import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { ProviderNotFound, RoutingError } from '../errors.js';
import { HealthMonitor } from './healthMonitor.js';
import { type HealingAction, SelfHealer, type SelfHealingSettings } from './selfHealer.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const S = 1000;

/**
 * A monitor (unhealthy after 1 failed probe, healthy after 1 pass, periodic
 * probing off so only the healer probes) and a healer, with every event as
 * a line of text.
 */
function setup(settings: SelfHealingSettings = {}, actions?: (up: Record<string, boolean>) => HealingAction[]) {
  const clock = new FakeScheduler(T0);
  const up: Record<string, boolean> = {};
  const health = new HealthMonitor({
    scheduler: clock,
    providers: ['a', 'b'],
    settings: { unhealthyThreshold: 1, healthyThreshold: 1 },
    probe: async (provider) => {
      if (up[provider] === false) throw new Error(`${provider} is down`);
    },
  });
  const healer = new SelfHealer({
    health,
    scheduler: clock,
    settings: { checkIntervalMs: 60 * S, backoffMs: 30 * S, maxAttempts: 3, ...settings },
    actions: actions?.(up) ?? [{ name: 'reset_pool', run: async () => {} }],
  });
  const log: string[] = [];
  const t = () => `${(clock.now() - T0) / S}s`;
  healer.events.on('healing:attempt', (e) => log.push(`${t()} attempt ${e.provider} ${e.attempt}/${e.maxAttempts}`));
  healer.events.on('healing:action', (e) => log.push(`${t()} action ${e.provider} ${e.action} ${e.ok ? 'ok' : `failed: ${e.error}`}`));
  healer.events.on('healing:outcome', (e) =>
    log.push(`${t()} outcome ${e.provider} ${e.outcome}${e.nextAttemptAt ? ` next ${(e.nextAttemptAt - T0) / S}s` : ''}`),
  );
  /** Makes `provider` unhealthy through a failed probe. */
  const breakDown = async (provider: string) => {
    up[provider] = false;
    await health.check(provider);
  };
  return { clock, up, health, healer, log, breakDown };
}

describe('SelfHealer', () => {
  test('an unhealthy provider gets maxAttempts attempts, backoffMs apart, then the healer gives up', async () => {
    const { clock, healer, log, breakDown } = setup();
    healer.start();
    await breakDown('a');
    await clock.advance(10 * 60 * S);
    assert.deepEqual(log, [
      '0s attempt a 1/3',
      '0s action a reset_pool ok',
      '0s outcome a retrying next 30s',
      '30s attempt a 2/3',
      '30s action a reset_pool ok',
      '30s outcome a retrying next 60s',
      '60s attempt a 3/3',
      '60s action a reset_pool ok',
      '60s outcome a gave_up',
    ]);
    assert.deepEqual(healer.status(), { a: { state: 'gave_up', attempts: 3, next_attempt_at: null, last_error: 'a is down' } });
    healer.stop();
  });

  test('an action that fixes the provider ends the episode as recovered; the monitor then reports it healthy', async () => {
    const { clock, health, healer, log, breakDown } = setup({}, (up) => [
      { name: 'refresh_credentials', run: async (provider) => void (up[provider] = true) },
    ]);
    healer.start();
    await breakDown('b');
    await clock.advance(0);
    assert.deepEqual(log, ['0s attempt b 1/3', '0s action b refresh_credentials ok', '0s outcome b recovered']);
    assert.equal(health.isHealthy('b'), true);
    assert.deepEqual(healer.status(), {}, 'healthy again: nothing left to track');
    healer.stop();
  });

  test('failing and hung actions are reported and do not stop the others', async () => {
    const { clock, healer, log, breakDown } = setup({ actionTimeoutMs: 5 * S, maxAttempts: 1 }, () => [
      {
        name: 'broken',
        run: async () => {
          throw new Error('pool already closed');
        },
      },
      { name: 'hangs', run: () => new Promise<void>(() => {}) },
      { name: 'only_for_b', appliesTo: (p) => p === 'b', run: async () => {} },
      { name: 'fine', run: async () => {} },
    ]);
    healer.start();
    await breakDown('a');
    await clock.advance(5 * S);
    assert.deepEqual(log, [
      '0s attempt a 1/1',
      '0s action a broken failed: pool already closed',
      '5s action a hangs failed: healing action hangs timed out after 5000 ms',
      '5s action a fine ok',
      '5s outcome a gave_up',
    ]);
    healer.stop();
  });

  test('a provider that recovers on its own while waiting for its next attempt is recovered, not retried', async () => {
    const { clock, up, health, healer, log, breakDown } = setup();
    healer.start();
    await breakDown('a');
    await clock.advance(10 * S);
    up.a = true;
    await health.check('a');
    await clock.advance(10 * 60 * S);
    assert.deepEqual(log.slice(-1), ['10s outcome a recovered']);
    assert.equal(log.filter((line) => line.includes('attempt')).length, 1);
    healer.stop();
  });

  test('every checkIntervalMs it picks up unhealthy providers it is not healing; one given up on waits until it was healthy again', async () => {
    const { clock, up, health, healer, log, breakDown } = setup({ maxAttempts: 1 });
    await breakDown('a'); // before the healer runs: no event reaches it
    healer.start();
    await clock.advance(0);
    assert.deepEqual(log, ['0s attempt a 1/1', '0s action a reset_pool ok', '0s outcome a gave_up']);
    await clock.advance(5 * 60 * S);
    assert.equal(log.length, 3, 'given up: later ticks leave it alone');
    up.a = true;
    await health.check('a');
    await breakDown('a');
    await clock.advance(0);
    assert.deepEqual(log.slice(3), ['300s attempt a 1/1', '300s action a reset_pool ok', '300s outcome a gave_up']);
    healer.stop();
    assert.equal(clock.pending, 0);
  });

  test('a healed provider whose next probe fails is healed again at the next tick', async () => {
    let fixes = 0;
    const fix = (state: Record<string, boolean>) => [
      {
        name: 'fix',
        run: async (provider: string) => {
          state[provider] = true;
          fixes++;
        },
      },
    ];
    const { clock, up, health, healer, log } = setup({}, fix);
    health.configure({ healthyThreshold: 2 });
    healer.start();
    up.a = false;
    await health.check('a');
    await clock.advance(0);
    assert.equal(fixes, 1);
    assert.deepEqual(healer.status().a?.state, 'healed', 'the probe passed; the monitor wants one more pass');
    up.a = false;
    await health.check('a');
    await clock.advance(60 * S);
    assert.equal(fixes, 2);
    assert.match(log.at(-1) ?? '', /^60s outcome a recovered$/);
    healer.stop();
  });

  test('switching off cancels running episodes; heal() starts one on demand; unknown providers are refused', async () => {
    const { clock, healer, log, breakDown } = setup({ maxAttempts: 5 });
    healer.start();
    await breakDown('a');
    await clock.advance(0);
    healer.configure({ enabled: false });
    assert.equal(log.at(-1), '0s outcome a cancelled');
    await clock.advance(10 * 60 * S);
    await breakDown('b');
    assert.equal(log.filter((line) => line.includes('attempt')).length, 1, 'no new episode while off');
    await healer.heal('b');
    assert.deepEqual(log.slice(-3), ['600s attempt b 1/5', '600s action b reset_pool ok', '600s outcome b retrying next 630s']);
    await assert.rejects(healer.heal('zzz'), ProviderNotFound);
    healer.stop();
    assert.equal(log.at(-1), '600s outcome b cancelled');
  });

  test('bad settings and actions are refused with the field named', () => {
    const invalid = (pattern: RegExp) => (e: unknown) => e instanceof RoutingError && pattern.test(e.message);
    assert.throws(() => setup({ maxAttempts: 0 }), invalid(/self_healing\.maxAttempts/));
    assert.throws(() => setup({ backoffMs: Number.NaN }), invalid(/self_healing\.backoffMs/));
    assert.throws(() => setup({}, () => [{ name: '', run: async () => {} }]), invalid(/actions\[0\]\.name/));
    assert.throws(() => setup({}, () => [{ name: 'x' } as HealingAction]), invalid(/actions\[0\]\.run/));
  });
});
