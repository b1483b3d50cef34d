import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import fc from 'fast-check';
import { ProviderNotFound, RoutingError } from '../errors.js';
import { HealthMonitor } from './healthMonitor.js';
import type { HealthMonitorOptions, HealthSettings } from './healthTypes.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

/** A monitor whose probe answers from `up[provider]` (default up), with its events recorded. */
function setup(settings: HealthSettings = {}, providers = ['a', 'b'], extra: Partial<HealthMonitorOptions> = {}) {
  const clock = new FakeScheduler(T0);
  const up: Record<string, boolean> = {};
  const probes: string[] = [];
  const monitor = new HealthMonitor({
    scheduler: clock,
    settings,
    providers,
    probe: async (provider) => {
      probes.push(provider);
      if (up[provider] === false) throw new Error(`${provider} answered 503`);
    },
    ...extra,
  });
  const changes: string[] = [];
  monitor.events.on('health:change', (e) => changes.push(`${e.provider} ${e.previous}→${e.status}`));
  return { clock, monitor, up, probes, changes };
}

describe('HealthMonitor: transitions', () => {
  test('healthy → unhealthy after unhealthyThreshold failures in a row; a pass in between starts the count again', async () => {
    const { monitor, up, changes } = setup({ unhealthyThreshold: 3 });
    up.a = false;
    await monitor.check('a');
    await monitor.check('a');
    up.a = true;
    await monitor.check('a');
    up.a = false;
    await monitor.check('a');
    await monitor.check('a');
    assert.equal(monitor.isHealthy('a'), true, 'two failures in a row are not three');
    const record = await monitor.check('a');
    assert.equal(monitor.isHealthy('a'), false);
    assert.deepEqual(changes, ['a healthy→unhealthy']);
    assert.equal(record.status, 'unhealthy');
    assert.equal(record.error_count, 3);
    assert.equal(record.last_error, 'a answered 503');
  });

  test('unhealthy → healthy after healthyThreshold passes in a row', async () => {
    const { monitor, up, changes } = setup({ unhealthyThreshold: 1, healthyThreshold: 2 });
    up.a = false;
    await monitor.check('a');
    up.a = true;
    await monitor.check('a');
    assert.equal(monitor.isHealthy('a'), false, 'one pass is not two');
    up.a = false;
    await monitor.check('a');
    up.a = true;
    await monitor.check('a');
    await monitor.check('a');
    assert.equal(monitor.isHealthy('a'), true);
    assert.deepEqual(changes, ['a healthy→unhealthy', 'a unhealthy→healthy']);
  });

  test('the change event carries the time and both statuses; every probe emits a check event', async () => {
    const { clock, monitor, up } = setup({ unhealthyThreshold: 1 });
    const events: unknown[] = [];
    monitor.events.on('health:check', (e) => events.push(['check', e]));
    monitor.events.on('health:change', (e) => events.push(['change', e]));
    up.b = false;
    await clock.advance(5000);
    await monitor.check('b');
    assert.deepEqual(events, [
      ['check', { provider: 'b', ok: false, latencyMs: 0, error: 'b answered 503', at: T0 + 5000 }],
      ['change', { provider: 'b', status: 'unhealthy', previous: 'healthy', at: T0 + 5000 }],
    ]);
  });

  test('property: the status is what the threshold rules say for any run of passes and failures', () => {
    fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.boolean(), { maxLength: 60 }),
        async (unhealthyThreshold, healthyThreshold, outcomes) => {
          const { monitor, up } = setup({ unhealthyThreshold, healthyThreshold }, ['p']);
          let healthy = true;
          let run = 0;
          let last: boolean | undefined;
          for (const ok of outcomes) {
            up.p = ok;
            await monitor.check('p');
            run = ok === last ? run + 1 : 1;
            last = ok;
            if (healthy && !ok && run >= unhealthyThreshold) healthy = false;
            if (!healthy && ok && run >= healthyThreshold) healthy = true;
            assert.equal(monitor.isHealthy('p'), healthy);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('HealthMonitor: the probing loop', () => {
  test('start() probes every provider at once, then every intervalMs; stop() ends it', async () => {
    const { clock, monitor, probes } = setup({ intervalMs: 30_000 });
    monitor.start();
    await clock.advance(0);
    assert.deepEqual(probes, ['a', 'b']);
    await clock.advance(29_999);
    assert.equal(probes.length, 2);
    await clock.advance(1);
    assert.equal(probes.length, 4);
    monitor.stop();
    await clock.advance(120_000);
    assert.equal(probes.length, 4);
    assert.equal(clock.pending, 0);
  });

  test('a hung probe fails at timeoutMs with its signal aborted, and the next round is not stacked on it', async () => {
    const clock = new FakeScheduler(T0);
    const signals: AbortSignal[] = [];
    let calls = 0;
    const monitor = new HealthMonitor({
      scheduler: clock,
      settings: { intervalMs: 1000, timeoutMs: 5000, unhealthyThreshold: 1 },
      providers: ['slow'],
      probe: (_provider, signal) => {
        calls++;
        signals.push(signal);
        return new Promise(() => {});
      },
    });
    const checks: unknown[] = [];
    monitor.events.on('health:check', (e) => checks.push(e));
    monitor.start();
    await clock.advance(4999);
    assert.equal(calls, 1, 'no second probe while the first runs');
    await clock.advance(1);
    assert.equal(signals[0]?.aborted, true);
    assert.deepEqual(checks, [
      { provider: 'slow', ok: false, latencyMs: 5000, error: 'health check of slow timed out after 5000 ms', at: T0 + 5000 },
    ]);
    assert.equal(monitor.isHealthy('slow'), false);
    await clock.advance(1000);
    assert.equal(calls, 2, 'the next round starts intervalMs after the last settled');
    monitor.stop();
  });

  test('concurrent checks of one provider share one probe', async () => {
    const { monitor, probes } = setup();
    const [x, y] = await Promise.all([monitor.check('a'), monitor.check('a')]);
    assert.deepEqual(probes, ['a']);
    assert.deepEqual(x, y);
  });

  test('configure: a new interval applies at once; switching checks off makes everyone healthy and stops probing', async () => {
    const { clock, monitor, up, probes, changes } = setup({ intervalMs: 60_000, unhealthyThreshold: 1 });
    up.a = false;
    monitor.start();
    await clock.advance(0);
    assert.equal(monitor.isHealthy('a'), false);
    monitor.configure({ intervalMs: 1000 });
    await clock.advance(1000);
    assert.equal(probes.length, 4, 'the new interval is used without waiting out the old one');
    monitor.configure({ enabled: false });
    assert.equal(monitor.isHealthy('a'), true);
    assert.deepEqual(changes, ['a healthy→unhealthy', 'a unhealthy→healthy']);
    await clock.advance(10_000);
    assert.equal(probes.length, 4);
    assert.equal(monitor.health().overall, 'healthy');
    monitor.configure({ enabled: true });
    await clock.advance(0);
    assert.equal(probes.length, 6, 'switching back on probes at once');
    monitor.stop();
  });

  test('bad settings and calls are refused with the field named', async () => {
    const invalid = (pattern: RegExp) => (e: unknown) => e instanceof RoutingError && pattern.test(e.message);
    assert.throws(() => setup({ intervalMs: 0 }), invalid(/health_check\.intervalMs/));
    assert.throws(() => setup({ unhealthyThreshold: 1.5 }), invalid(/health_check\.unhealthyThreshold/));
    assert.throws(() => setup({ enabled: 'yes' as unknown as boolean }), invalid(/health_check\.enabled/));
    assert.throws(() => setup({}, ['a', 'a']), invalid(/providers lists "a" twice/));
    assert.throws(() => new HealthMonitor({ providers: [], probe: undefined as never }), invalid(/probe must be a function/));
    const { monitor } = setup();
    assert.throws(() => monitor.configure({ timeoutMs: -1 }), invalid(/timeoutMs/));
    await assert.rejects(monitor.check('nope'), (e: unknown) => e instanceof ProviderNotFound && e.provider === 'nope');
    assert.throws(() => monitor.providerStatus('nope'), ProviderNotFound);
  });
});

describe('HealthMonitor: records', () => {
  test('health() gives every record and the overall verdict', async () => {
    const { clock, monitor, up } = setup({ unhealthyThreshold: 1 });
    assert.deepEqual(monitor.health(), {
      providers: {
        a: { provider: 'a', status: 'healthy', last_check: null, last_success: null, error_count: 0, last_error: null },
        b: { provider: 'b', status: 'healthy', last_check: null, last_success: null, error_count: 0, last_error: null },
      },
      overall: 'healthy',
      timestamp: '2026-01-01T00:00:00.000Z',
    });
    await monitor.check('a');
    await clock.advance(1000);
    up.a = false;
    up.b = false;
    await monitor.check('b');
    const aggregate = await monitor.checkAll();
    assert.equal(aggregate.overall, 'unhealthy');
    assert.deepEqual(aggregate.providers.a, {
      provider: 'a',
      status: 'unhealthy',
      last_check: '2026-01-01T00:00:01.000Z',
      last_success: '2026-01-01T00:00:00.000Z',
      error_count: 1,
      last_error: 'a answered 503',
    });
    up.a = true;
    await monitor.check('a');
    await monitor.check('a');
    assert.equal(monitor.health().overall, 'degraded');
    assert.equal(new HealthMonitor({ providers: [], probe: async () => {} }).health().overall, 'unhealthy');
  });

  test('providerStatus: cooldown, uptime over time, and the last minute of requests', async () => {
    let cooling = false;
    const { clock, monitor, up } = setup({ unhealthyThreshold: 1, healthyThreshold: 1 }, ['a'], {
      cooldowns: { isCooling: (key) => cooling && key === 'a' },
    });
    monitor.recordRequest('a', { ok: true, latencyMs: 100 });
    monitor.recordRequest('a', { ok: false, latencyMs: 300 });
    monitor.recordRequest('a', { ok: false, latencyMs: Number.NaN });
    monitor.recordRequest('ghost', { ok: true, latencyMs: 1 });
    await clock.advance(30 * 60_000);
    up.a = false;
    await monitor.check('a');
    cooling = true;
    assert.deepEqual(monitor.providerStatus('a'), {
      provider: 'a',
      status: 'unhealthy',
      in_cooldown: true,
      last_check: '2026-01-01T00:30:00.000Z',
      uptime_percent: 100,
      requests_last_minute: 0,
      errors_last_minute: 0,
      average_latency_ms: null,
    });
    await clock.advance(30 * 60_000);
    assert.equal(monitor.providerStatus('a').uptime_percent, 50);
    monitor.recordRequest('a', { ok: true, latencyMs: 10 });
    await clock.advance(59_000);
    monitor.recordRequest('a', { ok: false, latencyMs: 21 });
    monitor.recordRequest('a', { ok: true, latencyMs: 0 });
    const status = monitor.providerStatus('a');
    assert.equal(status.requests_last_minute, 3);
    assert.equal(status.errors_last_minute, 1);
    assert.equal(status.average_latency_ms, 10.33);
    await clock.advance(1000);
    assert.equal(monitor.providerStatus('a').requests_last_minute, 2, 'the first of the three has left the minute');
  });

  test('setProviders keeps state of providers that stay, adds new ones healthy, and drops outcomes of removed ones', async () => {
    const clock = new FakeScheduler(T0);
    let release: () => void = () => {};
    const monitor = new HealthMonitor({
      scheduler: clock,
      settings: { unhealthyThreshold: 1 },
      providers: ['a', 'b'],
      probe: async (provider) => {
        if (provider === 'a') throw new Error('down');
        await new Promise<void>((resolve) => (release = resolve));
        throw new Error('down too');
      },
    });
    await monitor.check('a');
    const pending = monitor.check('b');
    await clock.advance(0); // the probe is running
    monitor.setProviders(['a', 'c']);
    release();
    await pending;
    assert.deepEqual(monitor.providers, ['a', 'c']);
    assert.equal(monitor.isHealthy('a'), false, 'a kept its state');
    assert.equal(monitor.isHealthy('c'), true);
    monitor.setProviders(['a', 'b']);
    assert.equal(monitor.isHealthy('b'), true, 'b came back fresh; the late outcome of its old probe was dropped');
  });
});
