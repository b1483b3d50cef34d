import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeAuthServer } from '@switchyard/test-support';
import { InstantScheduler } from '../../test/instantScheduler.js';
import { parseCredential } from '../credential.js';
import type { CredentialsError } from '../errors.js';
import type { AuthFlowContext } from './authFlow.js';
import { deviceCodeFlow } from './deviceCodeFlow.js';
import { createHttpClient } from './http.js';

const server = new FakeAuthServer();
before(() => server.start());
after(() => server.stop());

function setup() {
  const scheduler = new InstantScheduler();
  const context: AuthFlowContext = { http: createHttpClient(), scheduler };
  const flow = deviceCodeFlow({
    name: 'acme',
    provider: 'acme',
    clientId: 'switchyard-test',
    scope: 'llm offline_access',
    deviceAuthorizationUrl: `${server.url}/rfc/device`,
    tokenUrl: `${server.url}/rfc/token`,
  });
  return { scheduler, context, flow };
}

async function signIn(script: FakeAuthServer['script'], options: { expiresIn?: number; interval?: number } = {}) {
  server.script = script;
  server.expiresIn = options.expiresIn ?? 900;
  server.interval = options.interval ?? 5;
  const { scheduler, context, flow } = setup();
  const before = server.calls('/rfc/token').length;
  const pending = await flow.start({}, context);
  const waitsBefore = scheduler.waits.length;
  const result = pending.complete().then(
    (tokens) => ({ tokens, error: undefined }),
    (error: CredentialsError) => ({ tokens: undefined, error }),
  );
  const outcome = await result;
  return { ...outcome, pending, waits: scheduler.waits.slice(waitsBefore), polls: server.calls('/rfc/token').length - before, scheduler };
}

describe('RFC 8628 device flow against a local server', () => {
  test('requests a device code and shows the user code and verification URI', async () => {
    const { pending, tokens } = await signIn(['token']);
    assert.match(pending.prompt.user_code, /^USER-\d+$/);
    assert.equal(pending.prompt.verification_uri, `${server.url}/activate`);
    assert.equal(pending.prompt.verification_uri_complete, `${server.url}/activate?code=${pending.prompt.user_code}`);
    assert.equal(pending.prompt.interval_ms, 5000);
    assert.equal(pending.prompt.expires_at, new Date(Date.parse('2026-05-01T09:00:00.000Z') + 900_000).toISOString());
    const request = server.calls('/rfc/device').at(-1)!;
    assert.deepEqual(request.body, { client_id: 'switchyard-test', scope: 'llm offline_access' });
    assert.match(tokens!.token, /^access-dc-/);
    assert.match(tokens!.refresh_token!, /^refresh-dc-/);
  });

  test('authorization_pending: polls again at the same interval, sending the device-code grant', async () => {
    const { tokens, waits, polls } = await signIn(['authorization_pending', 'authorization_pending', 'token']);
    assert.deepEqual(waits, [5000, 5000, 5000]);
    assert.equal(polls, 3);
    assert.ok(tokens);
    const poll = server.calls('/rfc/token').at(-1)!;
    assert.equal(poll.body.grant_type, 'urn:ietf:params:oauth:grant-type:device_code');
    assert.equal(poll.body.client_id, 'switchyard-test');
    assert.match(poll.body.device_code!, /^dc-/);
  });

  test('slow_down: adds 5 seconds to the interval, for this and every later poll', async () => {
    const { tokens, waits } = await signIn(['authorization_pending', 'slow_down', 'authorization_pending', 'slow_down', 'token'], {
      interval: 2,
    });
    assert.deepEqual(waits, [2000, 2000, 7000, 7000, 12000]);
    assert.ok(tokens);
  });

  test('expired_token: stops with a clear error', async () => {
    const { error, polls } = await signIn(['authorization_pending', 'expired_token']);
    assert.equal(error?.code, 'expired_token');
    assert.match(error!.message, /device code expired.*start again/);
    assert.equal(polls, 2);
  });

  test('access_denied: stops with a clear error', async () => {
    const { error } = await signIn(['access_denied']);
    assert.equal(error?.code, 'access_denied');
    assert.match(error!.message, /denied/);
  });

  test('stops by itself when expires_in passes, even if the server keeps saying pending', async () => {
    const { error, polls, waits } = await signIn(['authorization_pending'], { expiresIn: 12, interval: 5 });
    assert.equal(error?.code, 'expired_token');
    assert.deepEqual(waits, [5000, 5000, 5000]);
    assert.equal(polls, 2, 'no poll after the code expired');
  });

  test('server errors back off exponentially and the sign-in still completes', async () => {
    const { tokens, waits } = await signIn(['server_error', 'server_error', 'token']);
    assert.deepEqual(waits, [5000, 10000, 20000]);
    assert.ok(tokens);
  });

  test('a cancelled sign-in stops polling at once', async () => {
    server.script = ['authorization_pending'];
    const { context, flow } = setup();
    const pending = await flow.start({}, context);
    const controller = new AbortController();
    const done = pending.complete(controller.signal);
    controller.abort();
    await assert.rejects(done, (e: CredentialsError) => e.code === 'aborted');
  });
});

describe('refresh with a refresh token (RFC 6749 §6)', () => {
  const credential = (refresh?: string) =>
    parseCredential({
      id: 'acme-1',
      provider: 'acme',
      type: 'oauth',
      token: 'old',
      ...(refresh ? { refresh_token: refresh } : {}),
      oauth: { flow: 'acme' },
      created_at: '2026-05-01T00:00:00Z',
      updated_at: '2026-05-01T00:00:00Z',
    });

  test('a refresh returns the new token, the rotated refresh token and the new expiry', async () => {
    const { context, flow, scheduler } = setup();
    server.refreshScript = ['ok'];
    const tokens = await flow.refresh(credential('refresh-1'), context);
    assert.match(tokens.token, /^access-r\d+$/);
    assert.match(tokens.refresh_token!, /-from-refresh-1$/);
    assert.equal(tokens.expires_at, new Date(scheduler.now() + 3_600_000).toISOString());
    const sent = server.calls('/rfc/token').at(-1)!.body;
    assert.deepEqual([sent.grant_type, sent.refresh_token, sent.client_id], ['refresh_token', 'refresh-1', 'switchyard-test']);
  });

  test('invalid_grant is permanent (refresh_rejected); a 5xx is worth retrying (refresh_failed)', async () => {
    const { context, flow } = setup();
    server.refreshScript = ['invalid_grant', 'server_error'];
    await assert.rejects(
      flow.refresh(credential('r'), context),
      (e: CredentialsError) => e.code === 'refresh_rejected' && /sign in again/.test(e.message),
    );
    await assert.rejects(flow.refresh(credential('r'), context), (e: CredentialsError) => e.code === 'refresh_failed');
    await assert.rejects(flow.refresh(credential(), context), (e: CredentialsError) => e.code === 'refresh_rejected');
  });

  test('an unreachable server is a transient failure naming the endpoint, not the secret', async () => {
    const { context } = setup();
    const flow = deviceCodeFlow({
      name: 'x',
      provider: 'x',
      clientId: 'c',
      deviceAuthorizationUrl: 'http://127.0.0.1:1/d',
      tokenUrl: 'http://127.0.0.1:1/t',
    });
    await assert.rejects(flow.refresh(credential('SECRET-REFRESH'), context), (e: CredentialsError) => {
      assert.equal(e.code, 'refresh_failed');
      assert.match(e.message, /POST http:\/\/127\.0\.0\.1:1\/t failed/);
      assert.ok(!e.message.includes('SECRET'));
      return true;
    });
  });
});
