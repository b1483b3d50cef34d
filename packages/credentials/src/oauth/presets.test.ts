import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeAuthServer } from '@switchyard/test-support';
import { InstantScheduler } from '../../test/instantScheduler.js';
import { parseCredential } from '../credential.js';
import type { CredentialsError } from '../errors.js';
import type { AuthFlowContext, SignedIn } from './authFlow.js';
import { cloudCodingAssistantFlow } from './cloudCodingAssistantFlow.js';
import { codeAssistantFlow } from './codeAssistantFlow.js';
import { createHttpClient } from './http.js';

const server = new FakeAuthServer();
before(() => server.start());
after(() => server.stop());

const context = (): AuthFlowContext & { scheduler: InstantScheduler } => ({ http: createHttpClient(), scheduler: new InstantScheduler() });

function asCredential(flow: string, provider: string, tokens: SignedIn) {
  return parseCredential({
    id: `${provider}-1`,
    provider,
    type: 'oauth',
    token: tokens.token,
    refresh_token: tokens.refresh_token,
    expires_at: tokens.expires_at,
    oauth: { flow, params: tokens.params ?? {}, secrets: tokens.secrets ?? {} },
    created_at: '2026-05-01T00:00:00Z',
    updated_at: '2026-05-01T00:00:00Z',
  });
}

describe('code-assistant preset (GitHub-style device flow, then an API token exchange)', () => {
  const flow = () =>
    codeAssistantFlow({
      clientId: 'Iv1.test',
      deviceCodeUrl: `${server.url}/gh/device/code`,
      accessTokenUrl: `${server.url}/gh/access_token`,
      apiTokenUrl: `${server.url}/gh/api_token`,
      userUrl: `${server.url}/gh/user`,
    });

  test('signs in through every RFC 8628 answer sent with HTTP 200, then exchanges the account token', async () => {
    server.script = ['authorization_pending', 'slow_down', 'token'];
    server.interval = 5;
    const ctx = context();
    const pending = await flow().start({}, ctx);
    assert.equal(server.calls('/gh/device/code').at(-1)!.body.scope, 'read:user');
    const tokens = await pending.complete();
    assert.deepEqual(ctx.scheduler.waits.slice(-3), [5000, 5000, 10000]);
    assert.match(tokens.token, /^api-\d+-gho-account-dc-\d+$/, 'requests carry the short-lived API token');
    assert.match(tokens.refresh_token!, /^gho-account-dc-\d+$/, 'the account token is kept to refresh it');
    assert.ok(Date.parse(tokens.expires_at!) > Date.now());
    assert.deepEqual(tokens.params, { api_base_url: 'https://api.assistant.example' });
    assert.equal(tokens.label, 'octocat');
    assert.equal(server.calls('/gh/api_token').at(-1)!.headers.authorization, `token ${tokens.refresh_token}`);
  });

  test('access_denied and expired_token end the sign-in with their codes', async () => {
    for (const step of ['access_denied', 'expired_token'] as const) {
      server.script = [step];
      const pending = await flow().start({}, context());
      await assert.rejects(pending.complete(), (e: CredentialsError) => e.code === step);
    }
  });

  test('refresh repeats the exchange; a revoked account token means signing in again', async () => {
    server.script = ['token'];
    const ctx = context();
    const tokens = await (await flow().start({}, ctx)).complete();
    const credential = asCredential('code-assistant', 'code-assistant', tokens);
    const refreshed = await flow().refresh(credential, ctx);
    assert.notEqual(refreshed.token, tokens.token);
    assert.equal(refreshed.refresh_token, tokens.refresh_token);
    server.revoked.add(tokens.refresh_token!);
    await assert.rejects(
      flow().refresh(credential, ctx),
      (e: CredentialsError) => e.code === 'refresh_rejected' && /sign in again/.test(e.message),
    );
  });
});

describe('cloud coding-assistant preset (SSO-OIDC style)', () => {
  const flow = () => cloudCodingAssistantFlow({ oidcUrl: (region) => `${server.url}/oidc/${region}`, builderIdRegion: 'us-east-1' });

  for (const style of ['header', 'body'] as const) {
    test(`builder-ID: registers a client, starts at the fixed start URL, polls create-token (errors as ${style})`, async () => {
      server.oidcErrorStyle = style;
      server.script = ['authorization_pending', 'slow_down', 'authorization_pending', 'token'];
      server.interval = 1;
      const ctx = context();
      const pending = await flow().start({ account: 'builder_id' }, ctx);
      const register = server.calls('/client/register').at(-1)!;
      assert.equal(register.path, '/oidc/us-east-1/client/register');
      assert.equal(register.body.clientType, 'public');
      const start = server.calls('/device_authorization').at(-1)!;
      assert.equal((start.body as Record<string, unknown>).startUrl, 'https://view.awsapps.com/start');
      assert.match(pending.prompt.verification_uri_complete!, /user_code=USER-/);
      const tokens = await pending.complete();
      assert.deepEqual(ctx.scheduler.waits.slice(-4), [1000, 1000, 6000, 6000]);
      assert.match(tokens.token, /^oidc-access-dc-/);
      assert.match(tokens.refresh_token!, /^oidc-refresh-dc-/);
      assert.equal(tokens.label, 'builder-ID');
      assert.equal(tokens.params!.account, 'builder_id');
      assert.equal(tokens.params!.region, 'us-east-1');
      assert.match(tokens.secrets!.client_secret!, /^secret-/);
      const poll = server.calls('/token').at(-1)!.body;
      assert.equal(poll.grantType, 'urn:ietf:params:oauth:grant-type:device_code');
      assert.equal(poll.clientId, tokens.params!.client_id);
    });
  }

  test('identity-center: the user’s start URL and region pick the endpoint and the sign-in', async () => {
    server.oidcErrorStyle = 'header';
    server.script = ['token'];
    const tokens = await (
      await flow().start({ account: 'identity_center', start_url: 'https://my-org.awsapps.com/start', region: 'eu-central-1' }, context())
    ).complete();
    assert.equal(server.calls('/client/register').at(-1)!.path, '/oidc/eu-central-1/client/register');
    assert.equal(
      (server.calls('/device_authorization').at(-1)!.body as Record<string, unknown>).startUrl,
      'https://my-org.awsapps.com/start',
    );
    assert.equal(tokens.label, 'identity-center my-org.awsapps.com');
    assert.deepEqual(
      [tokens.params!.account, tokens.params!.region, tokens.params!.start_url],
      ['identity_center', 'eu-central-1', 'https://my-org.awsapps.com/start'],
    );
  });

  test('bad sign-in options are refused with the field named, before any request', async () => {
    const before = server.requests.length;
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'account'],
      [{ account: 'root' }, 'account'],
      [{ account: 'identity_center', start_url: 'https://x.example/start', region: 'evil.example.com/' }, 'region'],
      [{ account: 'identity_center', start_url: 'http://x.example/start', region: 'us-east-1' }, 'start_url'],
      [{ account: 'builder_id', region: 'us-east-1' }, 'region'],
    ];
    for (const [options, field] of cases) {
      await assert.rejects(flow().start(options, context()), (e: CredentialsError) => e.code === 'invalid_credential' && e.field === field);
    }
    assert.equal(server.requests.length, before);
  });

  test('access_denied and expired_token end the sign-in with their codes', async () => {
    for (const step of ['access_denied', 'expired_token'] as const) {
      server.script = [step];
      const pending = await flow().start({ account: 'builder_id' }, context());
      await assert.rejects(pending.complete(), (e: CredentialsError) => e.code === step);
    }
  });

  test('refresh uses the stored client and region; an invalid grant means signing in again', async () => {
    server.script = ['token'];
    const ctx = context();
    const tokens = await (
      await flow().start({ account: 'identity_center', start_url: 'https://org.awsapps.com/start', region: 'ap-south-1' }, ctx)
    ).complete();
    const credential = asCredential('cloud-coding-assistant', 'cloud-coding-assistant', tokens);
    server.refreshScript = ['ok', 'invalid_grant', 'server_error'];
    const refreshed = await flow().refresh(credential, ctx);
    assert.match(refreshed.token, /^oidc-access-r\d+$/);
    const sent = server.calls('/token').at(-1)!;
    assert.equal(sent.path, '/oidc/ap-south-1/token');
    assert.deepEqual(
      [sent.body.grantType, sent.body.refreshToken, sent.body.clientSecret],
      ['refresh_token', tokens.refresh_token, tokens.secrets!.client_secret],
    );
    await assert.rejects(flow().refresh(credential, ctx), (e: CredentialsError) => e.code === 'refresh_rejected');
    await assert.rejects(flow().refresh(credential, ctx), (e: CredentialsError) => e.code === 'refresh_failed');
  });
});
