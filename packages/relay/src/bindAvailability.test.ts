import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AllProvidersInCooldown,
  bindAvailability,
  CooldownManager,
  HealthMonitor,
  NoProviderAvailable,
  Selector,
} from '@switchyard/core-routing';
import { FakeScheduler } from '@switchyard/runtime';
import { followAvailability } from './availability.js';
import { RoutingTable } from './routingTable.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function setup() {
  const clock = new FakeScheduler(T0);
  const selector = new Selector([{ id: 'a' }, { id: 'b' }], { clock });
  const cooldowns = new CooldownManager({ scheduler: clock, detection: { errorThreshold: 1 }, defaultDurations: { defaultMs: 60_000 } });
  const up: Record<string, boolean> = {};
  const health = new HealthMonitor({
    scheduler: clock,
    providers: ['a', 'b'],
    settings: { unhealthyThreshold: 1, healthyThreshold: 1 },
    probe: async (p) => {
      if (up[p] === false) throw new Error('down');
    },
  });
  cooldowns.start();
  return { clock, selector, cooldowns, health, up };
}

test('cooldown and health events hold candidates out; they return only when neither source holds them', async () => {
  const { clock, selector, cooldowns, health, up } = setup();
  const unbind = bindAvailability(selector, { cooldowns, health });
  cooldowns.recordFailure('a', { kind: 'rate_limit' });
  assert.deepEqual(selector.unavailableReasons('a'), ['cooldown']);
  assert.equal(selector.status().candidates[0]?.available_at, new Date(T0 + 60_000).toISOString());
  up.a = false;
  await health.check('a');
  assert.deepEqual(selector.unavailableReasons('a'), ['cooldown', 'unhealthy']);
  await clock.advance(60_000);
  assert.deepEqual(selector.unavailableReasons('a'), ['unhealthy'], 'the cooldown ended; still unhealthy');
  up.a = true;
  await health.check('a');
  assert.equal(selector.isAvailable('a'), true);

  cooldowns.recordFailure('b', { kind: 'error' });
  cooldowns.recordFailure('b', { kind: 'rate_limit', retryAfterMs: 120_000 });
  assert.equal(selector.status().candidates[1]?.available_at, new Date(T0 + 180_000).toISOString(), 'an extension moves the end');
  cooldowns.recordFailure('a', { kind: 'error' });
  assert.throws(
    () => selector.select(),
    (e: unknown) => e instanceof AllProvidersInCooldown && e.retryAt === T0 + 120_000,
  );
  unbind();
  cooldowns.recover('a');
  assert.equal(selector.isAvailable('a'), false, 'unbound: events no longer reach the selector');
});

test('binding applies the current state at once; resync() catches up after setCandidates; unknown keys are ignored', async () => {
  const { selector, cooldowns, health, up } = setup();
  cooldowns.cooldown('a', 30_000);
  cooldowns.cooldown('openai/cred-1', 30_000);
  up.b = false;
  await health.check('b');
  const binding = bindAvailability(selector, { cooldowns, health });
  assert.deepEqual(selector.unavailableReasons('a'), ['cooldown']);
  assert.deepEqual(selector.unavailableReasons('b'), ['unhealthy']);
  assert.throws(() => selector.select(), AllProvidersInCooldown);

  selector.setCandidates([{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'openai/cred-1' }]);
  assert.equal(selector.isAvailable('openai/cred-1'), true, 'a new candidate starts available');
  binding.resync();
  assert.equal(selector.isAvailable('openai/cred-1'), false);
  assert.equal(selector.isAvailable('c'), true, 'c is not watched by the monitor, so not unhealthy');
  assert.equal(selector.select(), 'c');
  binding();
});

test('a reason set by someone else (exhausted, disabled) is left alone', () => {
  const { selector, cooldowns } = setup();
  selector.markUnavailable('a', 'exhausted');
  const unbind = bindAvailability(selector, { cooldowns });
  cooldowns.cooldown('a', 1000);
  cooldowns.recover('a');
  assert.deepEqual(selector.unavailableReasons('a'), ['exhausted']);
  selector.markUnavailable('b', 'disabled');
  assert.throws(() => selector.select(), NoProviderAvailable);
  unbind();
});

test('end to end on a fake clock: 429s cool a provider, recovery waits for its probe, the selector follows throughout', async () => {
  const clock = new FakeScheduler(T0);
  const up: Record<string, boolean> = { a: true, b: true };
  const health = new HealthMonitor({
    scheduler: clock,
    providers: ['a', 'b'],
    settings: { enabled: false }, // no periodic probing here: only the cooldown's recovery probes
    probe: async (p) => {
      if (!up[p]) throw new Error(`${p} is down`);
    },
  });
  const cooldowns = new CooldownManager({
    scheduler: clock,
    detection: { errorThreshold: 2 },
    defaultDurations: { rateLimitMs: 60_000 },
    recoveryIntervalMs: 30_000,
    healthCheck: async (key) => !health.providers.includes(key) || (await health.checkNow(key)).ok,
  });
  const selector = new Selector([{ id: 'a' }, { id: 'b', priority: 1 }], { strategy: 'priority', clock });
  bindAvailability(selector, { cooldowns, health });
  cooldowns.start();

  cooldowns.recordFailure('a', { kind: 'rate_limit' });
  cooldowns.recordFailure('a', { kind: 'rate_limit' });
  up.a = false;
  assert.equal(selector.select(), 'b');
  await clock.advance(60_000);
  assert.equal(selector.select(), 'b', 'the end passed, the probe failed: still out');
  up.a = true;
  await clock.advance(29_999);
  assert.equal(selector.select(), 'b');
  await clock.advance(1);
  assert.equal(selector.select(), 'a', 'the re-check 30 s later passed');
  cooldowns.stop();
});

test('a cooldown past its end whose probe failed holds out until the next check, and says so (not an end gone by)', async () => {
  const clock = new FakeScheduler(T0);
  let up = false;
  const cooldowns = new CooldownManager({
    scheduler: clock,
    detection: { errorThreshold: 1 },
    defaultDurations: { rateLimitMs: 60_000 },
    recoveryIntervalMs: 30_000,
    healthCheck: async () => up,
  });
  const selector = new Selector([{ id: 'a' }], { clock });
  bindAvailability(selector, { cooldowns });
  const table = new RoutingTable([{ name: 'a', kind: 'openai', baseUrl: 'http://127.0.0.1:1', models: ['m'] }], { clock });
  followAvailability(table, { cooldowns });
  cooldowns.start();
  const retryAt = (pick: () => unknown) => {
    try {
      pick();
    } catch (error) {
      assert.ok(error instanceof AllProvidersInCooldown);
      return error.retryAt;
    }
    assert.fail('expected every provider to be cooling');
  };
  const both = () => [retryAt(() => selector.select()), retryAt(() => table.route('m')!.selector.select())];

  cooldowns.recordFailure('a', { kind: 'rate_limit' });
  assert.deepEqual(both(), [T0 + 60_000, T0 + 60_000]);
  await clock.advance(60_000);
  // The probe at the end failed: the next one is 30 s away, and that is when it may return.
  assert.deepEqual(both(), [T0 + 90_000, T0 + 90_000]);
  await clock.advance(30_000);
  assert.deepEqual(both(), [T0 + 120_000, T0 + 120_000]);
  up = true;
  await clock.advance(30_000);
  assert.equal(selector.select(), 'a');
  assert.equal(table.route('m')!.selector.select(), 'a');
  cooldowns.stop();
});
