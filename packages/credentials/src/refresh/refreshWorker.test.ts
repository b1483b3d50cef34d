import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { type Credential, parseCredential } from '../credential.js';
import { CredentialsError } from '../errors.js';
import { CredentialManager } from '../manager/credentialManager.js';
import type { RefreshConfig } from '../manager/managerTypes.js';
import type { AuthFlow, FlowTokens } from '../oauth/authFlow.js';
import { MemoryCredentialStore } from '../store/memoryCredentialStore.js';

const T0 = Date.parse('2026-04-01T08:00:00.000Z');
const MIN = 60_000;

function oauth(id: string, expiresInMs: number, overrides: Record<string, unknown> = {}): Credential {
  return parseCredential({
    id,
    provider: 'assistant',
    type: 'oauth',
    token: `${id}-v1`,
    refresh_token: `${id}-refresh`,
    expires_at: new Date(T0 + expiresInMs).toISOString(),
    oauth: { flow: 'scripted' },
    created_at: new Date(T0).toISOString(),
    updated_at: new Date(T0).toISOString(),
    ...overrides,
  });
}

/** A flow whose refresh answers are set per test; counts calls. */
function scriptedFlow(clock: FakeScheduler) {
  const calls: string[] = [];
  let version = 1;
  const state: { answer: (credential: Credential) => Promise<FlowTokens> } = {
    answer: async (credential) => ({ token: `${credential.id}-v${++version}`, expires_at: new Date(clock.now() + 30 * MIN).toISOString() }),
  };
  const flow: AuthFlow = {
    name: 'scripted',
    provider: 'assistant',
    start: () => Promise.reject(new Error('not used')),
    refresh: (credential) => {
      calls.push(credential.id);
      return state.answer(credential);
    },
  };
  return { flow, calls, state };
}

async function setup(credentials: Credential[], refresh: RefreshConfig = {}) {
  const clock = new FakeScheduler(T0);
  const store = new MemoryCredentialStore(credentials);
  const scripted = scriptedFlow(clock);
  const manager = new CredentialManager({
    store,
    scheduler: clock,
    flows: [scripted.flow],
    refresh,
    http: () => Promise.reject(new Error('offline')),
  });
  await manager.start();
  return { clock, store, manager, ...scripted };
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('refresh worker on a fake clock', () => {
  test('every 5 minutes it refreshes what expires within 10, and reports it in its status record', async () => {
    const { clock, manager, calls } = await setup([oauth('soon', 20 * MIN), oauth('later', 60 * MIN)]);
    await clock.advance(5 * MIN);
    assert.deepEqual(calls, [], 'at T+5m "soon" still has 15 minutes');
    let status = manager.refreshStatus();
    assert.equal(status.last_check, new Date(T0 + 5 * MIN).toISOString());
    assert.equal(status.next_check, new Date(T0 + 10 * MIN).toISOString());
    assert.deepEqual([status.credentials_checked, status.refreshed, status.failed], [2, 0, 0]);
    await clock.advance(5 * MIN);
    assert.deepEqual(calls, ['soon']);
    status = manager.refreshStatus();
    assert.deepEqual(
      {
        last_check: status.last_check,
        next_check: status.next_check,
        checked: status.credentials_checked,
        refreshed: status.refreshed,
        failed: status.failed,
      },
      {
        last_check: new Date(T0 + 10 * MIN).toISOString(),
        next_check: new Date(T0 + 15 * MIN).toISOString(),
        checked: 2,
        refreshed: 1,
        failed: 0,
      },
    );
    assert.equal(manager.pool('assistant').acquire({ exclude: new Set(['later']) }).token, 'soon-v2');
    const stored = manager.describe('soon');
    assert.equal(stored.expires_at, new Date(T0 + 40 * MIN).toISOString());
    assert.equal(stored.revision, 2);
    await manager.close();
  });

  test('single-flight: concurrent triggers of every kind make one call, and the old token serves until the new one is stored', async () => {
    const { clock, manager, calls, state } = await setup([oauth('a', 8 * MIN)]);
    const gate = deferred<FlowTokens>();
    state.answer = () => gate.promise;
    const pool = manager.pool('assistant');
    const triggers = [
      manager.checkRefresh(),
      ...Array.from({ length: 5 }, () => pool.refresh('a')),
      manager.refresh('a'),
      manager.checkRefresh(),
    ];
    pool.reportFailure('a', { kind: 'rate_limit', retryAfterMs: 1 });
    await clock.advance(5 * MIN); // the interval pass fires while the refresh is in flight
    assert.deepEqual(calls, ['a'], 'one call to the token endpoint');
    assert.deepEqual(manager.refreshStatus().in_flight, ['a']);
    assert.equal(pool.acquire().token, 'a-v1', 'the old token still serves');
    gate.resolve({ token: 'a-new', expires_at: new Date(clock.now() + 60 * MIN).toISOString() });
    await Promise.all(triggers);
    assert.deepEqual(calls, ['a']);
    assert.equal(pool.acquire().token, 'a-new');
    assert.deepEqual(manager.refreshStatus().in_flight, []);
    await manager.close();
  });

  test('a failed refresh backs off (30 s, then 60 s); explicit refreshes are refused meanwhile unless forced', async () => {
    const { clock, manager, calls, state } = await setup([oauth('a', 8 * MIN), oauth('b', 8 * MIN)], { checkIntervalMs: 10_000 });
    state.answer = async (c) => {
      if (c.id === 'a') throw new CredentialsError('refresh_failed', 'token endpoint answered HTTP 503');
      return { token: 'b-v2', expires_at: new Date(clock.now() + 60 * MIN).toISOString() };
    };
    await clock.advance(10_000);
    assert.deepEqual(calls, ['a', 'b']);
    const status = manager.refreshStatus();
    assert.deepEqual([status.refreshed, status.failed], [1, 1]);
    assert.deepEqual(status.backoff, [
      { id: 'a', failures: 1, next_attempt: new Date(T0 + 40_000).toISOString(), last_error: 'token endpoint answered HTTP 503' },
    ]);
    await assert.rejects(manager.pool('assistant').refresh('a'), (e: CredentialsError) => e.code === 'refresh_backoff');
    await clock.advance(10_000); // T+20s: still backing off
    assert.deepEqual(calls, ['a', 'b']);
    await clock.advance(20_000); // T+40s: retried, fails again
    assert.deepEqual(calls, ['a', 'b', 'a']);
    assert.equal(manager.refreshStatus().backoff[0]!.next_attempt, new Date(T0 + 40_000 + 60_000).toISOString());
    state.answer = async () => ({ token: 'a-v2', expires_at: new Date(clock.now() + 60 * MIN).toISOString() });
    await manager.refresh('a'); // forced: the operator does not wait for the backoff
    assert.deepEqual(manager.refreshStatus().backoff, []);
    assert.equal(manager.describe('a').status, 'active');
    await manager.close();
  });

  test('a rejected grant is not retried: the credential goes to error for a person to sign in again', async () => {
    const { clock, manager, calls, state } = await setup([oauth('a', 8 * MIN), oauth('b', 60 * MIN)]);
    state.answer = async () => {
      throw new CredentialsError('refresh_rejected', 'the token endpoint rejected the refresh (invalid_grant); sign in again');
    };
    await clock.advance(5 * MIN);
    assert.deepEqual(calls, ['a']);
    const record = manager.describe('a');
    assert.equal(record.status, 'error');
    assert.match(record.status_message!, /invalid_grant.*sign in again/);
    assert.equal(manager.pool('assistant').acquire().id, 'b');
    await clock.advance(30 * MIN);
    assert.deepEqual(calls, ['a'], 'never retried');
    assert.deepEqual(manager.refreshStatus().backoff, []);
    await manager.close();
  });

  test('a token that expired while nobody refreshed it is refreshed too, and comes back', async () => {
    const { clock, manager, calls } = await setup([oauth('a', 1 * MIN), oauth('b', 60 * MIN)], { enabled: false, safetyIntervalMs: 0 });
    await clock.advance(2 * MIN);
    assert.equal(manager.pool('assistant').acquire().id, 'b');
    assert.equal(manager.describe('a').status, 'expired');
    await manager.checkRefresh();
    assert.deepEqual(calls, ['a']);
    assert.equal(manager.describe('a').status, 'active');
    await manager.close();
  });

  test('with auth.refresh.enabled false, only the 15-minute safety pass runs', async () => {
    const { clock, manager, calls } = await setup([oauth('a', 12 * MIN)], { enabled: false });
    await clock.advance(14 * MIN);
    assert.deepEqual(calls, []);
    assert.equal(manager.refreshStatus().next_check, new Date(T0 + 15 * MIN).toISOString());
    await clock.advance(1 * MIN);
    assert.deepEqual(calls, ['a']);
    const status = manager.refreshStatus();
    assert.equal(status.enabled, false);
    assert.equal(status.safety_pass.last_run, new Date(T0 + 15 * MIN).toISOString());
    assert.equal(status.safety_pass.next_run, new Date(T0 + 30 * MIN).toISOString());
    await manager.close();
  });

  test('a 401 on an OAuth token starts a refresh at once, and the token is back when it lands', async () => {
    const { manager, calls } = await setup([oauth('a', 60 * MIN)]);
    const pool = manager.pool('assistant');
    pool.reportFailure('a', { kind: 'unauthorized' });
    await manager.pool('assistant').refresh('a');
    assert.deepEqual(calls, ['a']);
    assert.equal(pool.acquire().token, 'a-v2');
    assert.equal(manager.describe('a').status, 'active');
    await manager.close();
  });

  test('when another process refreshed the credential while this one waited for the lock, its token is taken and the refresh token is not spent again', async () => {
    const clock = new FakeScheduler(T0);
    const store = new MemoryCredentialStore([oauth('a', 5 * MIN)]);
    const scripted = scriptedFlow(clock);
    const lock = deferred<void>();
    const manager = new CredentialManager({
      store,
      scheduler: clock,
      flows: [scripted.flow],
      refreshLock: { acquire: async () => lock.promise.then(() => async () => undefined) },
    });
    await manager.start();
    const refreshing = manager.pool('assistant').refresh('a');
    // Meanwhile the node that holds the lock refreshes and stores its token.
    const current = (await store.get('a'))!;
    await store.put({ ...current, token: 'a-by-other-node', expires_at: new Date(T0 + 90 * MIN).toISOString() });
    lock.resolve();
    assert.equal((await refreshing).token, 'a-by-other-node');
    assert.deepEqual(scripted.calls, []);
    await manager.close();
  });
});
