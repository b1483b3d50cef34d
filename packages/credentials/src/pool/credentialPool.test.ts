import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import fc from 'fast-check';
import type { z } from 'zod';
import { type Credential, type CredentialSchema, type CredentialStatus, parseCredential } from '../credential.js';
import { NoCredentials } from '../errors.js';
import { MemoryQuotaStore } from '../store/quotaStore.js';
import { CooldownTracker } from './cooldownTracker.js';
import { CredentialPool, type PoolStrategy } from './credentialPool.js';
import type { PoolEvents } from './poolEvents.js';
import { QuotaTracker } from './quotaTracker.js';

const T0 = Date.parse('2026-03-10T12:00:00.000Z');

function credential(id: string, overrides: Partial<z.input<typeof CredentialSchema>> = {}): Credential {
  return parseCredential({
    id,
    provider: 'openai',
    type: 'api_key',
    token: `tok-${id}`,
    created_at: new Date(T0).toISOString(),
    updated_at: new Date(T0).toISOString(),
    revision: 1,
    ...overrides,
  });
}

function setup(strategy: PoolStrategy, credentials: Credential[], options: { schedule?: 'daily' | 'monthly' } = {}) {
  const clock = new FakeScheduler(T0);
  const quotas = new QuotaTracker({ store: new MemoryQuotaStore(), scheduler: clock, scheduleOf: () => options.schedule });
  quotas.start();
  const cooldowns = new CooldownTracker({ scheduler: clock, random: () => 0.5 });
  const persisted: [string, CredentialStatus, string | null][] = [];
  const refreshed: string[] = [];
  const pool = new CredentialPool('openai', {
    strategy,
    scheduler: clock,
    quotas,
    cooldowns,
    persistStatus: (id, status, message) => persisted.push([id, status, message]),
    refresh: async (id) => {
      refreshed.push(id);
    },
  });
  pool.upsert(credentials);
  const rotations: PoolEvents['credential:rotated'][0][] = [];
  pool.events.on('credential:rotated', (e) => rotations.push(e));
  const picks = (n: number) => Array.from({ length: n }, () => pool.acquire().id);
  return { clock, quotas, pool, persisted, refreshed, rotations, picks };
}

describe('CredentialPool selection', () => {
  test('round_robin takes each credential in turn', () => {
    const { picks } = setup('round_robin', [credential('a'), credential('b'), credential('c')]);
    assert.deepEqual(picks(7), ['a', 'b', 'c', 'a', 'b', 'c', 'a']);
  });

  test('priority serves the lowest number first, round robin within a level, then the next level', () => {
    const { pool, picks } = setup('priority', [
      credential('backup', { priority: 5 }),
      credential('main-1', { priority: 0 }),
      credential('main-2', { priority: 0 }),
    ]);
    assert.deepEqual(picks(4), ['main-1', 'main-2', 'main-1', 'main-2']);
    pool.reportFailure('main-1', { kind: 'rate_limit' });
    pool.reportFailure('main-2', { kind: 'rate_limit' });
    assert.deepEqual(picks(2), ['backup', 'backup']);
  });

  test('quota_aware picks the most remaining quota, following usage as it is reported', () => {
    const { pool, picks } = setup('quota_aware', [
      credential('small', { quota: { limit: 1000, used: 0 } }),
      credential('large', { quota: { limit: 5000, used: 0 } }),
      credential('mid', { quota: { limit: 3000, used: 0 } }),
    ]);
    assert.deepEqual(picks(1), ['large']);
    pool.reportSuccess('large', { inputTokens: 2500, outputTokens: 0 });
    assert.deepEqual(picks(1), ['mid']);
    pool.reportSuccess('mid', { inputTokens: 2500, outputTokens: 0 });
    assert.deepEqual(picks(1), ['large']);
  });

  test('an acquired credential is frozen and carries only id, provider, token, type and the non-secret OAuth parameters', () => {
    const { pool } = setup('round_robin', [credential('a', { label: 'team', priority: 3 })]);
    const acquired = pool.acquire();
    assert.deepEqual({ ...acquired }, { id: 'a', provider: 'openai', token: 'tok-a', type: 'api_key', metadata: {} });
    assert.ok(Object.isFrozen(acquired));
    assert.equal(pool.acquire(), acquired, 'the same object every time: nothing is allocated per pick');
  });

  test('exclude skips credentials this request already tried', () => {
    const { pool } = setup('round_robin', [credential('a'), credential('b')]);
    assert.equal(pool.acquire({ exclude: new Set(['a']) }).id, 'b');
    assert.equal(pool.acquire({ exclude: new Set(['a']) }).id, 'b');
    assert.throws(() => pool.acquire({ exclude: new Set(['a', 'b']) }), /2 already tried/);
  });
});

describe('CredentialPool peek', () => {
  test('peek gives the preferred usable credential without counting a request or moving the rotation', () => {
    const { pool, picks } = setup('round_robin', [
      credential('b', { priority: 1 }),
      credential('a', { priority: 1 }),
      credential('c', { priority: 0 }),
    ]);
    assert.equal(pool.peek()?.id, 'c');
    assert.equal(pool.peek()?.id, 'c');
    assert.deepEqual(picks(3), ['a', 'b', 'c'], 'the rotation starts where it would have without the peeks');
    assert.ok(
      pool.status().every((record) => record.requests === 1),
      'peeks are not requests',
    );
  });

  test('peek skips cooling and unusable credentials, and gives undefined when none is usable', () => {
    const { pool } = setup('priority', [
      credential('a', { priority: 0 }),
      credential('b', { priority: 1, status: 'disabled' }),
      credential('c', { priority: 2 }),
    ]);
    pool.reportFailure('a', { kind: 'rate_limit', retryAfterMs: 60_000 });
    assert.equal(pool.peek()?.id, 'c');
    pool.reportFailure('c', { kind: 'rate_limit', retryAfterMs: 60_000 });
    assert.equal(pool.peek(), undefined);
  });
});

describe('CredentialPool rotation', () => {
  test('an exhausted credential is skipped, with a rotated event saying why, until its quota resets', async () => {
    const { clock, pool, picks, rotations, persisted } = setup(
      'round_robin',
      [credential('a', { quota: { limit: 100, used: 0 } }), credential('b')],
      {
        schedule: 'daily',
      },
    );
    assert.equal(pool.acquire().id, 'a');
    pool.reportSuccess('a', { inputTokens: 60, outputTokens: 40 });
    assert.deepEqual(picks(3), ['b', 'b', 'b']);
    assert.deepEqual(rotations, [{ provider: 'openai', from: 'a', to: 'b', reason: 'exhausted' }]);
    const status = pool.statusOf('a')!;
    assert.equal(status.status, 'exhausted');
    assert.match(status.status_message!, /100 of 100 tokens.*resets at 2026-03-11T00:00:00.000Z/);
    assert.deepEqual(persisted.at(-1)?.slice(0, 2), ['a', 'exhausted']);
    await clock.advance(12 * 60 * 60_000);
    assert.equal(pool.statusOf('a')!.status, 'active');
    assert.deepEqual(persisted.at(-1)?.slice(0, 2), ['a', 'active'], 'the reset is written back');
    assert.ok(picks(2).includes('a'));
  });

  test('an expired token is skipped at the pick, marked expired, and rotation says so', async () => {
    const { clock, pool, picks, rotations, persisted } = setup('round_robin', [
      credential('oauth-1', { type: 'oauth', expires_at: new Date(T0 + 60_000).toISOString() }),
      credential('oauth-2', { type: 'oauth', expires_at: new Date(T0 + 3_600_000).toISOString() }),
    ]);
    assert.deepEqual(picks(2), ['oauth-1', 'oauth-2']);
    await clock.advance(60_000);
    assert.deepEqual(picks(3), ['oauth-2', 'oauth-2', 'oauth-2']);
    assert.deepEqual(rotations, [{ provider: 'openai', from: 'oauth-1', to: 'oauth-2', reason: 'expired' }]);
    assert.equal(pool.statusOf('oauth-1')!.status, 'expired');
    assert.deepEqual(persisted, [['oauth-1', 'expired', `token expired at ${new Date(T0 + 60_000).toISOString()}`]]);
  });

  test('a refreshed record (newer revision, later expiry) brings the credential back', async () => {
    const { clock, pool } = setup('round_robin', [credential('o', { type: 'oauth', expires_at: new Date(T0 + 1000).toISOString() })]);
    await clock.advance(1000);
    assert.throws(() => pool.acquire(), NoCredentials);
    pool.upsert([credential('o', { type: 'oauth', token: 'fresh', expires_at: new Date(T0 + 3_600_000).toISOString(), revision: 2 })]);
    assert.equal(pool.acquire().token, 'fresh');
    // A late notification of the old revision changes nothing.
    pool.upsert([credential('o', { type: 'oauth', token: 'stale', revision: 1 })]);
    assert.equal(pool.acquire().token, 'fresh');
  });

  test('with none left, NoCredentials names the provider and why', () => {
    const empty = setup('round_robin', []).pool;
    assert.throws(
      () => empty.acquire(),
      (e: NoCredentials) => e.code === 'no_credentials' && e.provider === 'openai' && /none is configured/.test(e.message),
    );
    const { pool } = setup('round_robin', [credential('d', { status: 'disabled' }), credential('e', { status: 'error', token: '' })]);
    assert.throws(() => pool.acquire(), /"openai" is available: 1 disabled, 1 error/);
  });
});

describe('CredentialPool failures', () => {
  test('a 429 cools that credential down with doubling backoff; Retry-After wins; success resets it', async () => {
    const { clock, pool, picks, rotations } = setup('round_robin', [credential('a'), credential('b')]);
    const cooldowns: string[] = [];
    pool.events.on('cooldown:start', (e) => cooldowns.push(`${e.credentialId} ${e.until - clock.now()}ms`));
    pool.reportFailure('a', { kind: 'rate_limit' });
    assert.deepEqual(picks(2), ['b', 'b']);
    assert.deepEqual(
      rotations.map((r) => r.reason),
      ['rate_limited'],
    );
    await clock.advance(5000);
    pool.reportFailure('a', { kind: 'rate_limit' });
    await clock.advance(10_000);
    pool.reportFailure('a', { kind: 'rate_limit', retryAfterMs: 42_000 });
    assert.equal(pool.statusOf('a')!.cooldown_until, new Date(clock.now() + 42_000).toISOString());
    assert.equal(pool.statusOf('a')!.unavailable_reason, 'cooldown');
    await clock.advance(42_000);
    pool.reportSuccess('a');
    pool.reportFailure('a', { kind: 'rate_limit' });
    assert.deepEqual(cooldowns, ['a 5000ms', 'a 10000ms', 'a 42000ms', 'a 5000ms']);
  });

  test('reportUsage deducts tokens without clearing failure streaks: errors still add up to a cooldown, 429 backoff still doubles', async () => {
    const { clock, pool } = setup('round_robin', [credential('a', { quota: { limit: 10_000 } }), credential('b')]);
    const cooldowns: string[] = [];
    pool.events.on('cooldown:start', (e) => cooldowns.push(`${e.credentialId} ${e.until - clock.now()}ms`));
    // Streams that spent tokens and then broke: each reports its usage, then its failure.
    for (let i = 0; i < 3; i++) {
      pool.reportUsage('a', { inputTokens: 30, outputTokens: 10 });
      pool.reportFailure('a', { kind: 'error' });
    }
    assert.equal(pool.statusOf('a')!.unavailable_reason, 'cooldown', 'three errors in a row, with tokens spent between them');
    await clock.advance(5000);
    pool.reportUsage('a', { inputTokens: 30, outputTokens: 10 });
    pool.reportFailure('a', { kind: 'rate_limit' });
    await clock.advance(10_000);
    pool.reportUsage('a', { inputTokens: 30, outputTokens: 10 });
    pool.reportFailure('a', { kind: 'rate_limit' });
    assert.deepEqual(cooldowns, ['a 5000ms', 'a 10000ms', 'a 20000ms']);
    assert.equal(pool.statusOf('a')!.quota.used, 5 * 40, "every stream's tokens, once");
  });

  test('when every credential is cooling down, NoCredentials carries the first return time', () => {
    const { clock, pool } = setup('round_robin', [credential('a'), credential('b')]);
    pool.reportFailure('a', { kind: 'rate_limit', retryAfterMs: 30_000 });
    pool.reportFailure('b', { kind: 'rate_limit', retryAfterMs: 10_000 });
    assert.throws(
      () => pool.acquire(),
      (e: NoCredentials) => e.retryAt === clock.now() + 10_000 && /2 cooling down/.test(e.message),
    );
  });

  test('a 401 marks an API key as error, and an OAuth token expired while it refreshes', () => {
    const { pool, persisted, refreshed } = setup('round_robin', [
      credential('key'),
      credential('oauth', { type: 'oauth' }),
      credential('spare'),
    ]);
    pool.reportFailure('key', { kind: 'unauthorized', message: 'invalid_api_key' });
    pool.reportFailure('oauth', { kind: 'unauthorized' });
    assert.equal(pool.statusOf('key')!.status, 'error');
    assert.match(pool.statusOf('key')!.status_message!, /rejected the API key \(invalid_api_key\)/);
    assert.equal(pool.statusOf('oauth')!.status, 'expired');
    assert.deepEqual(refreshed, ['oauth']);
    assert.deepEqual(
      persisted.map(([id, status]) => [id, status]),
      [
        ['key', 'error'],
        ['oauth', 'expired'],
      ],
    );
    assert.equal(pool.acquire().id, 'spare');
  });

  test('upstream "quota exceeded" exhausts until the reset with a schedule, and cools down for an hour without', async () => {
    const scheduled = setup('round_robin', [credential('a'), credential('b')], { schedule: 'daily' });
    scheduled.pool.reportFailure('a', { kind: 'quota_exceeded' });
    assert.equal(scheduled.pool.statusOf('a')!.status, 'exhausted');
    await scheduled.clock.advance(12 * 60 * 60_000);
    assert.equal(scheduled.pool.statusOf('a')!.status, 'active');

    const unscheduled = setup('round_robin', [credential('a'), credential('b')]);
    unscheduled.pool.reportFailure('a', { kind: 'quota_exceeded' });
    assert.equal(unscheduled.pool.statusOf('a')!.unavailable_reason, 'cooldown');
    assert.equal(unscheduled.pool.statusOf('a')!.cooldown_until, new Date(T0 + 3_600_000).toISOString());
    assert.deepEqual(unscheduled.picks(2), ['b', 'b']);
    assert.deepEqual(
      unscheduled.rotations.map((r) => r.reason),
      ['exhausted'],
    );
  });

  test('other errors cool a credential down only after three in a row', () => {
    const { pool } = setup('round_robin', [credential('a'), credential('b')]);
    pool.reportFailure('a', { kind: 'error', message: 'upstream 502' });
    pool.reportFailure('a', { kind: 'error' });
    assert.equal(pool.statusOf('a')!.available, true);
    assert.equal(pool.statusOf('a')!.last_error, 'upstream 502');
    pool.reportFailure('a', { kind: 'error' });
    assert.equal(pool.statusOf('a')!.unavailable_reason, 'cooldown');
    assert.throws(() => pool.reportFailure('b', { kind: 'teapot' as 'error' }), /failure.kind/);
  });

  test('refresh() goes through the manager’s refresher and returns the credential', async () => {
    const { pool, refreshed } = setup('round_robin', [credential('o', { type: 'oauth' })]);
    assert.equal((await pool.refresh('o')).id, 'o');
    assert.deepEqual(refreshed, ['o']);
    await assert.rejects(pool.refresh('missing'), /no credential has id "missing"/);
    const bare = new CredentialPool('openai');
    bare.upsert([credential('k')]);
    await assert.rejects(bare.refresh('k'), (e: { code: string }) => e.code === 'not_refreshable');
  });
});

describe('CredentialPool status', () => {
  test('status() has every field a dashboard needs and never a secret', () => {
    const { pool } = setup('round_robin', [
      credential('o', {
        type: 'oauth',
        token: 'SECRET-ACCESS',
        refresh_token: 'SECRET-REFRESH',
        oauth: { flow: 'x', params: {}, secrets: { client_secret: 'SECRET-CLIENT' } },
        label: 'me',
        quota: { limit: 50, used: 0 },
      }),
    ]);
    pool.acquire();
    const [record] = pool.status();
    assert.ok(!JSON.stringify(pool.status()).includes('SECRET'));
    assert.deepEqual(Object.keys(record!).sort(), [
      'available',
      'cooldown_until',
      'created_at',
      'expires_at',
      'flow',
      'id',
      'label',
      'last_error',
      'last_used_at',
      'priority',
      'provider',
      'quota',
      'refreshable',
      'requests',
      'revision',
      'status',
      'status_message',
      'type',
      'unavailable_reason',
      'updated_at',
    ]);
    assert.equal(record!.requests, 1);
    assert.equal(record!.refreshable, true);
    assert.deepEqual(record!.quota, { limit: 50, used: 0, remaining: 50, period_start: null, resets_at: null });
  });

  test('property: acquire never hands out a credential that is unusable at that moment', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<PoolStrategy>('round_robin', 'quota_aware', 'priority'),
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant('acquire' as const) }),
            fc.record({
              op: fc.constant('success' as const),
              id: fc.integer({ min: 0, max: 4 }),
              tokens: fc.integer({ min: 0, max: 400 }),
            }),
            fc.record({
              op: fc.constant('failure' as const),
              id: fc.integer({ min: 0, max: 4 }),
              kind: fc.constantFrom('rate_limit' as const, 'error' as const, 'quota_exceeded' as const, 'unauthorized' as const),
            }),
            fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 120_000 }) }),
          ),
          { maxLength: 60 },
        ),
        async (strategy, ops) => {
          const credentials = Array.from({ length: 5 }, (_, i) =>
            credential(`c${i}`, {
              priority: i % 2,
              quota: { limit: i === 0 ? null : 1000, used: 0 },
              ...(i === 4 ? { type: 'oauth' as const, expires_at: new Date(T0 + 90_000).toISOString() } : {}),
            }),
          );
          const { clock, pool } = setup(strategy, credentials, { schedule: 'daily' });
          for (const step of ops) {
            if (step.op === 'advance') await clock.advance(step.ms);
            else if (step.op === 'success') pool.reportSuccess(`c${step.id}`, { inputTokens: step.tokens, outputTokens: 0 });
            else if (step.op === 'failure') pool.reportFailure(`c${step.id}`, { kind: step.kind });
            else {
              let picked: string | undefined;
              try {
                picked = pool.acquire().id;
              } catch (error) {
                assert.ok(error instanceof NoCredentials);
                assert.ok(pool.status().every((r) => !r.available));
                continue;
              }
              const record = pool.statusOf(picked)!;
              assert.equal(record.status, 'active', `${picked} is ${record.status}`);
              assert.equal(record.cooldown_until, null);
              if (record.expires_at) assert.ok(Date.parse(record.expires_at) > clock.now());
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
