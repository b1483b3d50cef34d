import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { inspect } from 'node:util';
import { FakeScheduler } from '@switchyard/runtime';
import { eventually, FakeAuthServer } from '@switchyard/test-support';
import { type CredentialsError, NoCredentials } from '../errors.js';
import { cloudCodingAssistantFlow } from '../oauth/cloudCodingAssistantFlow.js';
import { codeAssistantFlow } from '../oauth/codeAssistantFlow.js';
import { MemoryCredentialStore } from '../store/memoryCredentialStore.js';
import { MemoryQuotaStore } from '../store/quotaStore.js';
import type { CredentialsLogger } from '../util/logger.js';
import { CredentialManager } from './credentialManager.js';
import { MANAGER_EVENT_NAMES } from './managerTypes.js';

const T0 = Date.parse('2026-06-15T10:00:00.000Z');
const server = new FakeAuthServer();
before(() => server.start());
after(() => server.stop());

/**
 * Moves the fake clock until `promise` settles, letting real I/O (the local auth server) run in between.
 * The fake clock moves a second per real 10 ms: a slow answer of the auth server lets the device code's
 * fake 15 minutes run out only after 9 s of real time, and the wait ends with a message, not a hang.
 */
async function settle<T>(clock: FakeScheduler, promise: Promise<T>): Promise<T> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await eventually('the sign-in to settle', async () => {
    await clock.advance(1000);
    return done;
  });
  return promise;
}

async function setup(options: { strategy?: 'round_robin' | 'priority' | 'quota_aware'; logger?: CredentialsLogger } = {}) {
  const clock = new FakeScheduler(T0);
  const store = new MemoryCredentialStore();
  const manager = new CredentialManager({
    store,
    scheduler: clock,
    quotaStore: new MemoryQuotaStore(),
    quotaResetSchedule: { openai: 'daily' },
    ...options,
    flows: [
      codeAssistantFlow({
        deviceCodeUrl: `${server.url}/gh/device/code`,
        accessTokenUrl: `${server.url}/gh/access_token`,
        apiTokenUrl: `${server.url}/gh/api_token`,
        userUrl: `${server.url}/gh/user`,
      }),
      cloudCodingAssistantFlow({ oidcUrl: (region) => `${server.url}/oidc/${region}` }),
    ],
  });
  await manager.start();
  return { clock, store, manager };
}

describe('CredentialManager: the management API', () => {
  test('add, list, describe, update, set quota and delete, writing through the store', async () => {
    const { store, manager } = await setup();
    const added = await manager.add({ provider: 'openai', type: 'api_key', token: 'sk-one', priority: 2, label: 'team' });
    assert.match(added.id, /^openai-[0-9a-f]{8}$/);
    assert.deepEqual([added.status, added.priority, added.label, added.revision, added.available], ['active', 2, 'team', 1, true]);
    await manager.add({ id: 'anthropic-main', provider: 'anthropic', type: 'api_key', token: 'sk-ant' });
    assert.deepEqual(
      manager.list().map((r) => r.id),
      ['anthropic-main', added.id],
    );
    assert.deepEqual(
      manager.list('openai').map((r) => r.id),
      [added.id],
    );
    const updated = await manager.update(added.id, { token: 'sk-two', priority: 0 });
    assert.equal(updated.revision, 2);
    assert.equal((await store.get(added.id))!.token, 'sk-two');
    assert.equal(manager.pool('openai').acquire().token, 'sk-two');
    const quota = await manager.setQuota(added.id, { limit: 5000 });
    assert.deepEqual(quota.quota.limit, 5000);
    assert.equal(manager.quota('openai').limit, 5000);
    await manager.delete(added.id);
    assert.equal(await store.get(added.id), undefined);
    assert.throws(() => manager.pool('openai').acquire(), NoCredentials);
    await manager.close();
  });

  test('bad input is refused with a typed error naming the field, and never echoes a token', async () => {
    const { manager } = await setup();
    await manager.add({ id: 'openai-a', provider: 'openai', type: 'api_key', token: 'sk-a' });
    const cases: [() => Promise<unknown>, string, string][] = [
      [() => manager.add({ id: 'openai-a', provider: 'openai', type: 'api_key', token: 'sk-LEAK-1' }), 'credential_exists', 'id'],
      [() => manager.add({ provider: 'open ai', type: 'api_key', token: 'sk-LEAK-2' }), 'invalid_credential', 'provider'],
      [() => manager.add({ provider: 'openai', type: 'password' as 'api_key', token: 'sk-LEAK-3' }), 'invalid_credential', 'type'],
      [() => manager.add({ provider: 'openai', type: 'api_key', token: '' }), 'invalid_credential', 'token'],
      [
        () => manager.add({ provider: 'openai', type: 'api_key', token: 'sk-LEAK-4', refresh_token: 'x' }),
        'invalid_credential',
        'refresh_token',
      ],
      [() => manager.update('openai-a', { priority: 'high' as unknown as number }), 'invalid_credential', 'priority'],
      [() => manager.update('openai-a', { tokn: 'sk-LEAK-5' } as never), 'invalid_credential', 'tokn'],
      [() => manager.update('openai-a', { quota: { limit: -1 } }), 'invalid_credential', 'quota.limit'],
      [() => manager.update('missing', { priority: 1 }), 'credential_not_found', ''],
      [() => manager.add({ id: '../etc/passwd', provider: 'openai', type: 'api_key', token: 'sk-LEAK-6' }), 'invalid_credential', 'id'],
    ];
    for (const [call, code, field] of cases) {
      await assert.rejects(call(), (error: CredentialsError) => {
        assert.equal(error.code, code, error.message);
        if (field) assert.equal(error.field, field, error.message);
        assert.ok(!/LEAK/.test(error.message) && !/LEAK/.test(JSON.stringify(error.issues ?? [])), error.message);
        return true;
      });
    }
    await manager.close();
  });

  test('a new token clears an error status; status may be set to disabled and back', async () => {
    const { manager } = await setup();
    const { id } = await manager.add({ provider: 'openai', type: 'api_key', token: 'sk-bad' });
    manager.pool('openai').reportFailure(id, { kind: 'unauthorized' });
    assert.equal(manager.describe(id).status, 'error');
    assert.equal((await manager.update(id, { token: 'sk-good' })).status, 'active');
    assert.equal((await manager.update(id, { status: 'disabled' })).status, 'disabled');
    assert.throws(() => manager.pool('openai').acquire(), /1 disabled/);
    assert.equal((await manager.update(id, { status: 'active' })).available, true);
    await manager.close();
  });

  test('statuses the pools decide are written back to the store, off the request path', async () => {
    const { store, manager, clock } = await setup();
    const { id } = await manager.add({ provider: 'openai', type: 'api_key', token: 'sk', quota: { limit: 100 } });
    manager.pool('openai').reportSuccess(id, { inputTokens: 70, outputTokens: 30 });
    assert.equal((await store.get(id))!.status, 'active', 'reportSuccess itself writes nothing');
    await clock.advance(0);
    assert.equal((await store.get(id))!.status, 'exhausted');
    assert.match((await store.get(id))!.status_message!, /100 of 100 tokens/);
    await clock.advance(14 * 60 * 60_000); // past midnight UTC: the quota resets
    assert.equal((await store.get(id))!.status, 'active');
    await manager.close();
  });

  test('configure switches the strategy of every pool at runtime', async () => {
    const { manager } = await setup();
    await manager.add({ id: 'openai-a', provider: 'openai', type: 'api_key', token: 'a', priority: 1 });
    await manager.add({ id: 'openai-b', provider: 'openai', type: 'api_key', token: 'b', priority: 0 });
    const pool = manager.pool('openai');
    assert.deepEqual([pool.acquire().id, pool.acquire().id], ['openai-a', 'openai-b']);
    manager.configure({ strategy: 'priority' });
    assert.deepEqual([pool.acquire().id, pool.acquire().id], ['openai-b', 'openai-b']);
    assert.throws(
      () => manager.configure({ strategy: 'latency' as 'priority' }),
      (e: CredentialsError) => e.field === 'auth.selection_strategy',
    );
    await manager.close();
  });
});

describe('CredentialManager: runtime updates through the queue', () => {
  test('submit applies auth.upsert and auth.delete in order and resolves once applied', async () => {
    const { store, manager } = await setup();
    const applied: string[] = [];
    manager.events.on('auth:applied', (e) => applied.push(`${e.update.type} ${e.update.type === 'config.reload' ? '' : e.update.id}`));
    const first = await manager.submit({
      type: 'auth.upsert',
      credential: { id: 'ws-1', provider: 'openai', type: 'api_key', token: 'from-ws' },
    });
    assert.deepEqual(first, { id: 'ws-1', revision: 1 }, 'it resolves with the applied revision');
    assert.equal(manager.pool('openai').acquire().token, 'from-ws');
    const moved = await manager.submit({
      type: 'auth.upsert',
      credential: { id: 'ws-1', provider: 'anthropic', type: 'api_key', token: 'moved' },
    });
    assert.deepEqual(moved, { id: 'ws-1', revision: 2 });
    assert.throws(() => manager.pool('openai').acquire(), NoCredentials, 'it left the old provider’s pool');
    assert.equal(manager.pool('anthropic').acquire().token, 'moved');
    assert.deepEqual(await manager.submit({ type: 'auth.delete', id: 'ws-1' }), { id: 'ws-1', revision: 2 }, 'the revision removed');
    assert.deepEqual(await manager.submit({ type: 'auth.delete', id: 'ws-1' }), { id: 'ws-1', revision: null }, 'already gone');
    const generated = await manager.submit({ type: 'auth.upsert', credential: { provider: 'openai', type: 'api_key', token: 'no-id' } });
    assert.match(generated.id, /^openai-/);
    assert.equal(manager.describe(generated.id).revision, generated.revision);
    await manager.submit({ type: 'auth.delete', id: generated.id });
    applied.splice(-2);
    assert.equal(await store.get('ws-1'), undefined);
    assert.deepEqual(applied, ['auth.upsert ws-1', 'auth.upsert ws-1', 'auth.delete ws-1', 'auth.delete ws-1']);
    await assert.rejects(
      manager.submit({ type: 'auth.upsert', credential: { provider: 'openai', type: 'api_key', token: '' } }),
      (e: CredentialsError) => e.field === 'token',
    );
    await manager.close();
  });

  test('changes made to the store by someone else reach the pools through the queue', async () => {
    const { store, manager } = await setup();
    await manager.add({ id: 'shared', provider: 'openai', type: 'api_key', token: 'v1' });
    const applied: string[] = [];
    manager.events.on('auth:applied', (e) => applied.push(`${e.update.type} ${e.update.source}`));
    // Another writer of the same store (a second process, say) changes the credential.
    await store.put({ ...(await store.get('shared'))!, token: 'v2' });
    // A cluster notice queued after it is applied after it: FIFO.
    await manager.enqueue({ type: 'config.reload', path: 'marker', source: 'config' });
    assert.equal(manager.pool('openai').acquire().token, 'v2');
    await store.delete('shared');
    await manager.enqueue({ type: 'config.reload', path: 'marker', source: 'config' });
    assert.throws(() => manager.pool('openai').acquire(), NoCredentials);
    assert.deepEqual(applied, ['auth.upsert store', 'config.reload config', 'auth.delete store', 'config.reload config']);
    await manager.close();
  });
});

describe('CredentialManager: device sign-in', () => {
  test('a code-assistant sign-in stores an OAuth credential; signing in again updates it', async () => {
    server.script = ['authorization_pending', 'token'];
    server.interval = 0;
    const { manager, clock } = await setup();
    const session = await manager.signIns.start('code-assistant');
    assert.equal(session.state, 'pending');
    assert.match(session.prompt.user_code, /^USER-/);
    const record = await settle(clock, manager.signIns.wait(session.id));
    assert.equal(manager.signIns.get(session.id).state, 'succeeded');
    assert.equal(manager.signIns.get(session.id).credential_id, record.id);
    assert.deepEqual(
      [record.provider, record.type, record.flow, record.label, record.refreshable],
      ['code-assistant', 'oauth', 'code-assistant', 'octocat', true],
    );
    const again = await settle(clock, manager.signIns.wait((await manager.signIns.start('code-assistant')).id));
    assert.equal(again.id, record.id, 'the same account is updated, not duplicated');
    assert.equal(manager.list('code-assistant').length, 1);
    await manager.close();
  });

  test('a denied sign-in ends failed with its code; unknown flows are refused; sign-ins can be cancelled', async () => {
    const { manager, clock } = await setup();
    server.script = ['access_denied'];
    server.interval = 0;
    const denied = await manager.signIns.start('cloud-coding-assistant', { account: 'builder_id' });
    await assert.rejects(settle(clock, manager.signIns.wait(denied.id)), (e: CredentialsError) => e.code === 'access_denied');
    assert.deepEqual(manager.signIns.get(denied.id).error?.code, 'access_denied');
    await assert.rejects(manager.signIns.start('nope'), (e: CredentialsError) => e.code === 'flow_not_found');
    server.script = ['authorization_pending'];
    server.interval = 3600;
    const slow = await manager.signIns.start('cloud-coding-assistant', { account: 'builder_id' });
    manager.signIns.cancel(slow.id);
    await assert.rejects(manager.signIns.wait(slow.id));
    assert.equal(manager.signIns.get(slow.id).state, 'cancelled');
    await manager.close();
  });
});

describe('CredentialManager: secrets stay inside', () => {
  test('no token, refresh token or client secret appears in events, logs, errors, status or JSON', async () => {
    const logged: unknown[] = [];
    const logger: CredentialsLogger = {
      debug: (...args) => logged.push(args),
      info: (...args) => logged.push(args),
      warn: (...args) => logged.push(args),
      error: (...args) => logged.push(args),
    };
    const { manager, clock } = await setup({ logger });
    const seen: unknown[] = [];
    for (const name of MANAGER_EVENT_NAMES) manager.events.on(name, (event: unknown) => seen.push([name, event]));
    const errors: unknown[] = [];
    const attempt = async (fn: () => unknown) => {
      try {
        await fn();
      } catch (error) {
        errors.push(error, inspect(error, { depth: 5 }));
      }
    };
    server.script = ['token'];
    server.interval = 0;
    const signedIn = await settle(
      clock,
      manager.signIns.wait((await manager.signIns.start('cloud-coding-assistant', { account: 'builder_id' })).id),
    );
    await manager.add({ id: 'openai-secret', provider: 'openai', type: 'api_key', token: 'sk-SECRET-api-key', quota: { limit: 10 } });
    await manager.submit({
      type: 'auth.upsert',
      credential: { id: 'openai-ws', provider: 'openai', type: 'api_key', token: 'sk-SECRET-ws' },
    });
    const pool = manager.pool('openai');
    pool.reportSuccess('openai-secret', { inputTokens: 10, outputTokens: 0 });
    pool.reportFailure('openai-ws', { kind: 'rate_limit' });
    await attempt(() => pool.acquire());
    await attempt(() => manager.update('openai-ws', { token: 'sk-SECRET-bad', bogus: 1 } as never));
    await attempt(() => manager.add({ provider: 'openai', type: 'api_key', token: 'sk-SECRET-dup', id: 'openai-secret' }));
    server.refreshScript = ['invalid_grant'];
    await attempt(() => manager.refresh(signedIn.id));
    await clock.advance(60_000);
    const secrets = [/SECRET/, /oidc-access-/, /oidc-refresh-/, /secret-\d/];
    const haystack = [
      JSON.stringify(seen),
      JSON.stringify(logged),
      errors.map(String).join('\n'),
      JSON.stringify(errors),
      JSON.stringify(manager.list()),
      JSON.stringify(manager.refreshStatus()),
      JSON.stringify(manager.signIns.list()),
      inspect(manager.list(), { depth: 10 }),
    ].join('\n');
    for (const secret of secrets) assert.ok(!secret.test(haystack), `${secret} leaked`);
    assert.ok(seen.length > 10 && errors.length >= 6, 'the scenario produced events and errors to check');
    await manager.close();
  });
});
