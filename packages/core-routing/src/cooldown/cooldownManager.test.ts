import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { RoutingError } from '../errors.js';
import { CooldownManager, MAX_COOLDOWN_MS } from './cooldownManager.js';
import type { CooldownEvents, CooldownManagerOptions } from './cooldownTypes.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const MIN = 60_000;

/** A manager on a fake clock, with every event it emits recorded in order. */
function setup(options: Omit<CooldownManagerOptions, 'scheduler'> = {}, start = true) {
  const clock = new FakeScheduler(T0);
  const manager = new CooldownManager({ scheduler: clock, ...options });
  const events: Array<{ name: keyof CooldownEvents; at: number; payload: unknown }> = [];
  for (const name of ['cooldown:start', 'cooldown:update', 'cooldown:end', 'cooldown:check_failed', 'cooldown:store_error'] as const) {
    manager.events.on(name, (payload: unknown) => events.push({ name, at: clock.now(), payload }));
  }
  if (start) manager.start();
  const names = () => events.map((e) => e.name);
  return { clock, manager, events, names };
}

const rateLimit = { kind: 'rate_limit', status: 429 } as const;
const serverError = { kind: 'error', status: 500 } as const;
const isInvalid = (pattern: RegExp) => (e: unknown) => e instanceof RoutingError && /invalid_/.test(e.code) && pattern.test(e.message);

describe('CooldownManager: into cooldown by threshold', () => {
  test('the 5th rate limit within the window starts a rate_limit cooldown of rateLimitMs, and resets the counter', async () => {
    const { clock, manager, events } = setup({ durations: { openai: { rateLimitMs: 2 * MIN } } });
    for (let i = 0; i < 4; i++) {
      assert.equal(manager.recordFailure('openai', rateLimit), undefined);
      await clock.advance(1000);
    }
    assert.equal(manager.isCooling('openai'), false);
    const period = manager.recordFailure('openai', rateLimit);
    assert.deepEqual(period, { key: 'openai', reason: 'rate_limit', startedAt: T0 + 4000, endsAt: T0 + 4000 + 2 * MIN });
    assert.equal(manager.isCooling('openai'), true);
    assert.deepEqual(manager.period('openai'), period);
    assert.deepEqual(events[0]?.payload, { ...period, source: 'local' });

    await clock.advance(2 * MIN);
    assert.equal(manager.isCooling('openai'), false);
    // The counter was reset when the cooldown started: four more failures are not enough.
    for (let i = 0; i < 4; i++) manager.recordFailure('openai', rateLimit);
    assert.equal(manager.isCooling('openai'), false);
  });

  test('the window slides: failures older than windowMs do not count; one exactly windowMs old does', async () => {
    const { clock, manager } = setup({ detection: { windowMs: 10_000, errorThreshold: 3 } });
    manager.recordFailure('a', rateLimit);
    await clock.advance(6000);
    manager.recordFailure('a', rateLimit);
    await clock.advance(5000);
    assert.equal(manager.recordFailure('a', rateLimit), undefined, 'the first of three is 11 s old');
    await clock.advance(1000);
    assert.equal(manager.recordFailure('b', rateLimit), undefined, 'keys count separately');
    assert.equal(manager.recordFailure('a', rateLimit)?.startedAt, T0 + 12_000, 'the last three fall within 6 s');

    manager.recordFailure('c', rateLimit);
    await clock.advance(10_000);
    manager.recordFailure('c', rateLimit);
    assert.ok(manager.recordFailure('c', rateLimit), 'a failure exactly 10 s ago still counts');
  });

  test('other errors count separately, with errorMs and reason error', () => {
    const { manager } = setup({ detection: { errorThreshold: 3 }, durations: { p: { errorMs: 30_000, rateLimitMs: 90_000 } } });
    manager.recordFailure('p', rateLimit);
    manager.recordFailure('p', rateLimit);
    manager.recordFailure('p', serverError);
    manager.recordFailure('p', serverError);
    assert.equal(manager.isCooling('p'), false, 'two of each is not three of one');
    const period = manager.recordFailure('p', serverError);
    assert.equal(period?.reason, 'error');
    assert.equal(period!.endsAt - period!.startedAt, 30_000);
  });

  test('durations: own entry, then the provider of a `<provider>/<credential>` key, then defaultDurations, then 5 minutes', () => {
    const { manager } = setup({
      detection: { errorThreshold: 1 },
      durations: { openai: { defaultMs: 7000 }, 'openai/special': { rateLimitMs: 1000 } },
      defaultDurations: { errorMs: 3000 },
    });
    const length = (key: string, kind: 'rate_limit' | 'error') => {
      manager.recover(key);
      const p = manager.recordFailure(key, { kind })!;
      return p.endsAt - p.startedAt;
    };
    assert.equal(length('openai', 'rate_limit'), 7000);
    assert.equal(length('openai/key-1', 'error'), 7000);
    assert.equal(length('openai/special', 'rate_limit'), 1000);
    assert.equal(length('openai/special', 'error'), 5 * MIN, 'an own entry replaces the provider entry as a whole');
    assert.equal(length('other', 'error'), 3000);
    assert.equal(length('other2', 'rate_limit'), 5 * MIN, 'defaultDurations without rateLimitMs or defaultMs → 5 minutes');
    const plain = new CooldownManager({ scheduler: new FakeScheduler(0), detection: { errorThreshold: 1 } });
    const p = plain.recordFailure('x', serverError)!;
    assert.equal(p.endsAt - p.startedAt, 5 * MIN);
  });
});

describe('CooldownManager: Retry-After', () => {
  test('a longer Retry-After sets the end; a shorter one does not', () => {
    const { manager } = setup({ detection: { errorThreshold: 1 }, durations: { p: { rateLimitMs: MIN } } });
    assert.equal(manager.recordFailure('p', { ...rateLimit, retryAfterMs: 5 * MIN })?.endsAt, T0 + 5 * MIN);
    assert.equal(manager.recordFailure('q', { ...rateLimit, retryAfterMs: 1000 })?.endsAt, T0 + 5 * MIN, 'q uses the 5-minute default');
    assert.equal(manager.recordFailure('p2', { ...rateLimit, retryAfterMs: 0 })?.endsAt, T0 + 5 * MIN);
  });

  test('endsBy caps the cooldown a failure starts, below the backoff and a Retry-After, in one start and no update', () => {
    const { manager, names } = setup({ detection: { errorThreshold: 1 }, durations: { p: { rateLimitMs: 5 * MIN } } });
    assert.equal(manager.recordFailure('p', { ...rateLimit, endsBy: T0 + 40_000 })?.endsAt, T0 + 40_000);
    assert.equal(manager.recordFailure('q', { ...rateLimit, retryAfterMs: 10 * MIN, endsBy: T0 + MIN })?.endsAt, T0 + MIN);
    assert.equal(manager.recordFailure('r', { ...rateLimit, endsBy: T0 + 10 * MIN })?.endsAt, T0 + 5 * MIN, 'a cap, never an extension');
    assert.equal(
      manager.recordFailure('t', { ...rateLimit, endsBy: T0 - 5 })?.endsAt,
      T0 + 1,
      'an instant already past still starts a cooldown that ends',
    );
    assert.deepEqual(names(), ['cooldown:start', 'cooldown:start', 'cooldown:start', 'cooldown:start']);
    for (const endsBy of [Number.NaN, Number.POSITIVE_INFINITY, '1' as unknown as number])
      assert.throws(() => manager.recordFailure('s', { ...rateLimit, endsBy }), isInvalid(/endsBy/));
  });

  test('a Retry-After seen earlier in the window is honoured when the threshold is reached', async () => {
    const { clock, manager } = setup({ detection: { errorThreshold: 3 }, defaultDurations: { defaultMs: 1000 } });
    manager.recordFailure('p', { ...rateLimit, retryAfterMs: 120_000 });
    await clock.advance(10_000);
    manager.recordFailure('p', rateLimit);
    assert.equal(manager.recordFailure('p', rateLimit)?.endsAt, T0 + 120_000);
  });

  test('a later Retry-After while cooling extends the end (cooldown:update), and the key returns at the new end', async () => {
    const { clock, manager, events, names } = setup({ detection: { errorThreshold: 1 }, defaultDurations: { defaultMs: MIN } });
    const first = manager.recordFailure('p', rateLimit)!;
    await clock.advance(10_000);
    assert.equal(manager.recordFailure('p', { ...rateLimit, retryAfterMs: 20_000 }), undefined, 'an earlier end changes nothing');
    assert.deepEqual(names(), ['cooldown:start']);
    assert.equal(manager.recordFailure('p', { ...rateLimit, retryAfterMs: 3 * MIN }), undefined);
    assert.deepEqual(names(), ['cooldown:start', 'cooldown:update']);
    assert.deepEqual(events[1]?.payload, { period: { ...first, endsAt: T0 + 10_000 + 3 * MIN }, previous: first, source: 'local' });
    await clock.advance(MIN);
    assert.equal(manager.isCooling('p'), true, 'the old end has passed; the new one has not');
    await clock.advance(2 * MIN);
    assert.equal(manager.isCooling('p'), false);
    assert.equal(events.at(-1)?.at, T0 + 10_000 + 3 * MIN);
  });

  test('Retry-After is capped by maxRetryAfterMs', () => {
    const { manager } = setup({ detection: { errorThreshold: 1 }, defaultDurations: { defaultMs: 1000, maxRetryAfterMs: 10 * MIN } });
    assert.equal(manager.recordFailure('p', { ...rateLimit, retryAfterMs: 365 * 24 * 60 * MIN })?.endsAt, T0 + 10 * MIN);
  });
});

describe('CooldownManager: out of cooldown', () => {
  test('by expiry, exactly at the end, when there is no health check', async () => {
    const { clock, manager, events, names } = setup({ detection: { errorThreshold: 1 }, defaultDurations: { defaultMs: 30_000 } });
    manager.recordFailure('p', serverError);
    await clock.advance(29_999);
    assert.deepEqual(names(), ['cooldown:start']);
    await clock.advance(1);
    assert.deepEqual(names(), ['cooldown:start', 'cooldown:end']);
    assert.deepEqual(events[1]?.payload, { key: 'p', reason: 'error', endedBy: 'expiry', at: T0 + 30_000, source: 'local' });
    assert.equal(clock.pending, 0, 'no timer left behind');
  });

  test('by manual cooldown and recover', () => {
    const { manager, events, names } = setup();
    const period = manager.cooldown('p', 10 * MIN);
    assert.deepEqual(period, { key: 'p', reason: 'manual', startedAt: T0, endsAt: T0 + 10 * MIN });
    assert.equal(manager.isCooling('p'), true);
    assert.equal(manager.recover('p'), true);
    assert.equal(manager.isCooling('p'), false);
    assert.equal(manager.recover('p'), false, 'not cooling any more');
    assert.deepEqual(names(), ['cooldown:start', 'cooldown:end']);
    assert.deepEqual(events[1]?.payload, { key: 'p', reason: 'manual', endedBy: 'recover', at: T0, source: 'local' });
    assert.equal(manager.cooldown('q', 1000, 'rate_limit').reason, 'rate_limit');
  });

  test('a manual cooldown longer than a timer can wait is refused, not ended at once (found by fuzzing)', () => {
    const { manager } = setup();
    assert.throws(() => manager.cooldown('p', MAX_COOLDOWN_MS + 1), isInvalid(/at most/));
    assert.throws(() => manager.cooldown('p', 8_638_204_709_353_792), isInvalid(/at most/));
    assert.equal(manager.isCooling('p'), false);
    assert.equal(manager.cooldown('p', MAX_COOLDOWN_MS).endsAt, T0 + MAX_COOLDOWN_MS);
  });

  test('a manual cooldown replaces an automatic one, even a longer one', () => {
    const { manager, names } = setup({ detection: { errorThreshold: 1 } });
    manager.recordFailure('p', serverError);
    const manual = manager.cooldown('p', 1000);
    assert.deepEqual(manager.period('p'), manual);
    assert.deepEqual(names(), ['cooldown:start', 'cooldown:update']);
  });

  test('recover clears the failure counts too', () => {
    const { manager } = setup({ detection: { errorThreshold: 3 } });
    manager.recordFailure('p', serverError);
    manager.recordFailure('p', serverError);
    assert.equal(manager.recover('p'), false);
    manager.recordFailure('p', serverError);
    assert.equal(manager.isCooling('p'), false);
  });

  test('recovery loop: checked at once when the end passes, re-checked every recoveryIntervalMs while failing, back when it passes', async () => {
    let healthy = false;
    const checks: number[] = [];
    const { clock, manager, events, names } = setup({
      detection: { errorThreshold: 1 },
      defaultDurations: { defaultMs: MIN },
      recoveryIntervalMs: 30_000,
      healthCheck: async (key) => {
        assert.equal(key, 'p');
        checks.push(clock.now() - T0);
        return healthy;
      },
    });
    manager.recordFailure('p', rateLimit);
    await clock.advance(MIN);
    assert.deepEqual(checks, [MIN], 'the first check runs the moment the end passes');
    assert.equal(manager.isCooling('p'), true, 'a failed check keeps the key cooling');
    assert.deepEqual(events[1]?.payload, {
      key: 'p',
      at: T0 + MIN,
      error: 'the health check reported the upstream unhealthy',
      failedChecks: 1,
      nextCheckAt: T0 + MIN + 30_000,
    });
    assert.equal(manager.status().cooldown_periods.p?.awaiting_health_check, true);
    await clock.advance(60_000);
    assert.deepEqual(checks, [MIN, MIN + 30_000, MIN + 60_000]);
    healthy = true;
    await clock.advance(30_000);
    assert.equal(manager.isCooling('p'), false);
    assert.deepEqual(names(), [
      'cooldown:start',
      'cooldown:check_failed',
      'cooldown:check_failed',
      'cooldown:check_failed',
      'cooldown:end',
    ]);
    assert.deepEqual(events.at(-1)?.payload, {
      key: 'p',
      reason: 'rate_limit',
      endedBy: 'health_check',
      at: T0 + MIN + 90_000,
      source: 'local',
    });
    assert.equal(clock.pending, 0);
  });

  test('a health check that throws or hangs counts as failed, so a key is never stuck behind it', async () => {
    let mode: 'throw' | 'hang' | 'ok' = 'throw';
    const { clock, manager, events } = setup({
      detection: { errorThreshold: 1 },
      defaultDurations: { defaultMs: 1000 },
      recoveryIntervalMs: 5000,
      healthCheckTimeoutMs: 2000,
      healthCheck: (): Promise<boolean> => {
        if (mode === 'throw') throw new Error('connect ECONNREFUSED 127.0.0.1:9');
        if (mode === 'hang') return new Promise(() => {});
        return Promise.resolve(true);
      },
    });
    manager.recordFailure('p', serverError);
    await clock.advance(1000);
    assert.equal((events[1]!.payload as { error: string }).error, 'connect ECONNREFUSED 127.0.0.1:9');
    mode = 'hang';
    await clock.advance(5000);
    assert.equal(manager.isCooling('p'), true, 'cooling while the check hangs');
    await clock.advance(2000);
    assert.equal((events[2]!.payload as { error: string }).error, 'health check timed out after 2000 ms');
    mode = 'ok';
    await clock.advance(5000);
    assert.equal(manager.isCooling('p'), false);
    assert.equal((events.at(-1)!.payload as { endedBy: string }).endedBy, 'health_check');
  });

  test('a recover or an extension while a check runs wins over the check', async () => {
    let resolveCheck: (ok: boolean) => void = () => {};
    const { clock, manager, names } = setup({
      detection: { errorThreshold: 1 },
      defaultDurations: { defaultMs: 1000 },
      healthCheck: () => new Promise<boolean>((resolve) => (resolveCheck = resolve)),
    });
    manager.recordFailure('p', serverError);
    await clock.advance(1000);
    manager.recordFailure('p', { ...rateLimit, retryAfterMs: MIN });
    resolveCheck(true);
    await clock.advance(0);
    assert.equal(manager.isCooling('p'), true, 'the extension outranks the check that started before it');
    await clock.advance(MIN);
    manager.recover('p');
    resolveCheck(false);
    await clock.advance(0);
    assert.deepEqual(names(), ['cooldown:start', 'cooldown:update', 'cooldown:end']);
  });

  test('without start(), isCooling itself ends an overdue period (or runs its check): nothing depends on a timer', async () => {
    const { clock, manager, names } = setup({ detection: { errorThreshold: 1 }, defaultDurations: { defaultMs: 1000 } }, false);
    manager.recordFailure('p', serverError);
    assert.equal(clock.pending, 0, 'an unstarted manager schedules nothing');
    clock.set(T0 + 1000);
    assert.equal(manager.isCooling('p'), false);
    assert.deepEqual(names(), ['cooldown:start', 'cooldown:end']);

    let healthy = false;
    const gated = setup(
      { detection: { errorThreshold: 1 }, defaultDurations: { defaultMs: 1000 }, healthCheck: async () => healthy },
      false,
    );
    gated.manager.recordFailure('p', serverError);
    gated.clock.set(T0 + 1000);
    assert.equal(gated.manager.isCooling('p'), true, 'checking');
    await gated.clock.advance(0);
    healthy = true;
    assert.equal(gated.manager.isCooling('p'), true, 'the failed check set the next one 30 s out');
    gated.clock.set(T0 + 31_000);
    gated.manager.isCooling('p');
    await gated.clock.advance(0);
    assert.equal(gated.manager.isCooling('p'), false);
  });

  test('stop() leaves no timer behind; start() again picks the periods up', async () => {
    const { clock, manager } = setup({ detection: { errorThreshold: 1 }, defaultDurations: { defaultMs: 1000 } });
    manager.recordFailure('p', serverError);
    manager.stop();
    assert.equal(clock.pending, 0);
    await clock.advance(5000);
    manager.start();
    await clock.advance(0);
    assert.deepEqual(manager.status().providers_in_cooldown, []);
  });
});

describe('CooldownManager: settings', () => {
  test('detection off, or a key with automatic cooldowns off, never cools automatically; manual still works', () => {
    const { manager } = setup({ detection: { enabled: false, errorThreshold: 1 }, durations: { off: { enabled: false } } });
    assert.equal(manager.recordFailure('p', rateLimit), undefined);
    manager.configure({ detection: { enabled: true } });
    assert.equal(manager.recordFailure('off', rateLimit), undefined);
    assert.ok(manager.recordFailure('p', rateLimit));
    assert.ok(manager.cooldown('off', 1000));
  });

  test('backoff: each cooldown in a row lasts longer, up to maxMs; a success resets it', async () => {
    const { clock, manager } = setup({
      detection: { errorThreshold: 1 },
      defaultDurations: { defaultMs: 1000, backoff: { multiplier: 2, maxMs: 5000 } },
    });
    const lengths: number[] = [];
    for (let i = 0; i < 5; i++) {
      const p = manager.recordFailure('k', serverError)!;
      lengths.push(p.endsAt - p.startedAt);
      await clock.advance(p.endsAt - p.startedAt);
    }
    assert.deepEqual(lengths, [1000, 2000, 4000, 5000, 5000]);
    manager.recordSuccess('k');
    assert.equal(manager.recordFailure('k', serverError)!.endsAt - clock.now(), 1000);
  });

  test('hot reload: new durations apply to the next cooldown; running periods keep their end', async () => {
    const { clock, manager } = setup({ detection: { errorThreshold: 2 }, durations: { p: { rateLimitMs: MIN } } });
    manager.recordFailure('p', rateLimit);
    const running = manager.recordFailure('p', rateLimit)!;
    manager.recordFailure('q', rateLimit);
    manager.configure({ durations: { p: { rateLimitMs: 10 * MIN } }, detection: { errorThreshold: 3 } });
    assert.deepEqual(manager.period('p'), running);
    manager.recordFailure('q', rateLimit);
    assert.equal(manager.isCooling('q'), false, 'the threshold is now 3, and the failure before the reload still counts');
    manager.recordFailure('q', rateLimit);
    assert.equal(manager.isCooling('q'), true);
    await clock.advance(MIN);
    assert.equal(manager.isCooling('p'), false);
    for (let i = 0; i < 3; i++) manager.recordFailure('p', rateLimit);
    assert.equal(manager.period('p')!.endsAt - clock.now(), 10 * MIN);
    manager.configure({ defaultDurations: { defaultMs: 1000 } });
    for (let i = 0; i < 3; i++) manager.recordFailure('r', rateLimit);
    assert.equal(manager.period('r')!.endsAt - clock.now(), 1000, 'durations replaced as a whole: p is no longer listed');
  });

  test('hot reload: switching a key off ends its automatic cooldown, not a manual one', () => {
    const { manager } = setup({ detection: { errorThreshold: 1 } });
    manager.recordFailure('auto', serverError);
    manager.cooldown('manual', MIN);
    manager.configure({ durations: { auto: { enabled: false }, manual: { enabled: false } } });
    assert.deepEqual(manager.status().providers_in_cooldown, ['manual']);
  });

  test('a reloaded health check and interval are used from the next check', async () => {
    const { clock, manager } = setup({ detection: { errorThreshold: 1 }, defaultDurations: { defaultMs: 1000 } });
    manager.configure({ healthCheck: async () => false, recoveryIntervalMs: 2000 });
    manager.recordFailure('p', serverError);
    await clock.advance(3000);
    assert.equal(manager.status().cooldown_periods.p?.failed_checks, 2);
    manager.configure({ healthCheck: undefined });
    await clock.advance(2000);
    assert.equal(manager.isCooling('p'), false);
  });

  test('bad settings are refused with the field named, and change nothing', () => {
    assert.throws(() => new CooldownManager({ detection: { windowMs: -1 } }), isInvalid(/detection\.windowMs/));
    assert.throws(() => new CooldownManager({ detection: { errorThreshold: 0 } }), isInvalid(/detection\.errorThreshold/));
    assert.throws(
      () => new CooldownManager({ durations: { openai: { rateLimitMs: Number.NaN } } }),
      isInvalid(/durations\["openai"\]\.rateLimitMs/),
    );
    assert.throws(() => new CooldownManager({ defaultDurations: { backoff: { multiplier: 0.5 } } }), isInvalid(/backoff\.multiplier/));
    assert.throws(() => new CooldownManager({ recoveryIntervalMs: 0 }), isInvalid(/recoveryIntervalMs/));
    const { manager } = setup({ detection: { errorThreshold: 1 } });
    assert.throws(() => manager.configure({ detection: { errorThreshold: 2 }, durations: { p: { errorMs: -5 } } }), isInvalid(/errorMs/));
    assert.ok(manager.recordFailure('x', serverError), 'the threshold is still 1');
    assert.throws(() => manager.configure({ scheduler: new FakeScheduler() }), isInvalid(/create a new/));
  });

  test('bad calls are refused with the argument named', () => {
    const { manager } = setup();
    assert.throws(() => manager.recordFailure('', rateLimit), isInvalid(/key/));
    assert.throws(() => manager.recordFailure('p', { kind: 'timeout' as 'error' }), isInvalid(/failure\.kind/));
    assert.throws(() => manager.recordFailure('p', { kind: 'error', retryAfterMs: -1 }), isInvalid(/retryAfterMs/));
    assert.throws(() => manager.recordFailure('p', undefined as never), isInvalid(/failure\.kind/));
    assert.throws(() => manager.cooldown('p', 0), isInvalid(/durationMs/));
    assert.throws(() => manager.cooldown('p', 1000, 'nap' as 'manual'), isInvalid(/reason/));
    assert.deepEqual(manager.status(), { providers_in_cooldown: [], cooldown_periods: {} });
  });
});

describe('CooldownManager: status', () => {
  test('lists cooling keys with ISO times, reason and remaining seconds', async () => {
    const { clock, manager } = setup({ detection: { errorThreshold: 1 } });
    manager.cooldown('b', 90_500);
    manager.recordFailure('a', rateLimit);
    await clock.advance(30_000);
    assert.deepEqual(manager.status(), {
      providers_in_cooldown: ['a', 'b'],
      cooldown_periods: {
        a: {
          started_at: '2026-01-01T00:00:00.000Z',
          ends_at: '2026-01-01T00:05:00.000Z',
          reason: 'rate_limit',
          kind: 'rate_limit',
          remaining_seconds: 270,
          awaiting_health_check: false,
          failed_checks: 0,
        },
        b: {
          started_at: '2026-01-01T00:00:00.000Z',
          ends_at: '2026-01-01T00:01:30.500Z',
          reason: 'manual',
          kind: 'manual',
          remaining_seconds: 61,
          awaiting_health_check: false,
          failed_checks: 0,
        },
      },
    });
    manager.cooldown('__proto__', 1000);
    assert.deepEqual(Object.keys(manager.status().cooldown_periods), ['__proto__', 'a', 'b'], 'any key is a plain own property');
    // An operator's reason is the reason shown; the kind stays manual.
    manager.cooldown('c', 60_000, 'manual', 'maintenance window');
    assert.deepEqual(
      [manager.status().cooldown_periods.c?.reason, manager.status().cooldown_periods.c?.kind],
      ['maintenance window', 'manual'],
    );
    assert.throws(() => manager.cooldown('c', 60_000, 'manual', 'x'.repeat(201)), /note must be/);
  });
});
