import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FakeOpenAi, startFakeOpenAi } from '@switchyard/test-support';
import { signInProviders, startFakeAuth } from '../../test/signInFixture.js';
import { startTestGateway } from '../../test/startTestGateway.js';
import { parseConfig } from './config/load.js';
import type { Gateway } from './gateway.js';

const KEY = 'oauth-mgmt-secret';
const auth = await startFakeAuth();
const upstream: FakeOpenAi = await startFakeOpenAi();
const dir = await mkdtemp(join(tmpdir(), 'oauth-routes-'));
const gateways: Gateway[] = [];

after(async () => {
  for (const gateway of gateways) await gateway.close();
  await auth.stop();
  await upstream.close();
  await rm(dir, { recursive: true, force: true });
});

function config(remote: string) {
  return `
port: 0
api-keys: [sk-client]
auth-dir: ${join(dir, `auths-${gateways.length}`)}
remote-management: ${remote}
providers:
${signInProviders(auth, { acmeBaseUrl: upstream.url, acmeClientSecret: 'hush-client-secret' })}  broken:
    kind: mock
    models: [broken-model]
    oauth: { device_authorization_url: '${auth.url}/no-such-endpoint', token_url: '${auth.url}/rfc/token', client_id: x }
metrics: { enabled: false }
`;
}

async function start(remote = `{ secret-key: ${KEY}, trusted-proxies: [127.0.0.1] }`) {
  const { gateway } = await startTestGateway(config(remote));
  gateways.push(gateway);
  const call = (route: string, init: { method?: string; headers?: Record<string, string>; key?: string | null; body?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    if (init.key !== null) headers.set('authorization', `Bearer ${init.key ?? KEY}`);
    const body = init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    if (body !== undefined) headers.set('content-type', 'application/json');
    return fetch(`${gateway.url}${route}`, { method: init.method ?? 'GET', headers, ...(body === undefined ? {} : { body }) });
  };
  return { gateway, call };
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are probed field by field
const json = async (response: Response) => (await response.json()) as Record<string, any>;

/** Polls a sign-in's status until it is no longer pending (or the deadline passes). */
async function settled(call: Awaited<ReturnType<typeof start>>['call'], id: string, deadlineMs = 20_000) {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const body = await json(await call(`/v0/oauth/sessions/${id}`));
    if (body.status !== 'pending') return body;
    if (Date.now() > until) assert.fail(`sign-in ${id} still pending after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('/v0/oauth: the management auth rules', async () => {
  const { call } = await start();
  const closed = await start("{ secret-key: '' }");

  test('no secret key: the API and the page are 404', async () => {
    for (const [route, method] of [
      ['/v0/oauth/acme/sessions', 'POST'],
      ['/v0/oauth/sessions/abc', 'GET'],
      ['/v0/oauth/acme', 'GET'],
    ] as const) {
      const response = await closed.call(route, { method });
      assert.equal(response.status, 404, `${method} ${route}`);
      assert.equal((await json(response)).error.code, 'not_found');
    }
  });

  test('401 for a missing or wrong key in either header; the page asks for the key without a session', async () => {
    assert.equal((await call('/v0/oauth/acme/sessions', { method: 'POST', key: null })).status, 401);
    assert.equal((await call('/v0/oauth/acme/sessions', { method: 'POST', key: 'nope' })).status, 401);
    const wrongHeader = await call('/v0/oauth/sessions/abc', { key: null, headers: { 'x-management-key': 'nope' } });
    assert.equal(wrongHeader.status, 401);
    const rightHeader = await call('/v0/oauth/sessions/abc', { key: null, headers: { 'x-management-key': KEY } });
    assert.equal(rightHeader.status, 404, 'past the guard: the session is unknown');
    const page = await call('/v0/oauth/acme', { key: null });
    assert.equal(page.status, 401);
    const text = await page.text();
    assert.match(text, /<label for="key">Management key<\/label>/);
    assert.match(text, /name="next" value="\/v0\/oauth\/acme"/, 'the form returns to the sign-in page');
  });

  test('403 for a non-local client when allow-remote is false', async () => {
    for (const route of ['/v0/oauth/acme/sessions', '/v0/oauth/acme']) {
      const response = await call(route, {
        method: route.endsWith('sessions') ? 'POST' : 'GET',
        headers: { 'x-forwarded-for': '203.0.113.9' },
      });
      assert.equal(response.status, 403, route);
      assert.equal((await json(response)).error.code, 'forbidden');
    }
  });

  test('5 wrong keys lock the address out with 429 and Retry-After', async () => {
    const open = await start(`{ secret-key: ${KEY}, trusted-proxies: [127.0.0.1], allow-remote: true }`);
    const remote = { 'x-forwarded-for': '198.51.100.8' };
    for (let i = 0; i < 5; i++)
      assert.equal((await open.call('/v0/oauth/acme/sessions', { method: 'POST', key: 'bad', headers: remote })).status, 401);
    const locked = await open.call('/v0/oauth/sessions/abc', { key: 'bad', headers: remote });
    assert.equal(locked.status, 429);
    assert.equal(locked.headers.get('retry-after'), '1800');
  });

  test('the sign-in form opens a session and returns to the sign-in page, never elsewhere', async () => {
    const { gateway } = await start();
    const login = (next: string) =>
      fetch(`${gateway.url}/dashboard/login`, { method: 'POST', body: new URLSearchParams({ key: KEY, next }), redirect: 'manual' });
    const back = await login('/v0/oauth/acme');
    assert.equal(back.status, 303);
    assert.equal(back.headers.get('location'), '/v0/oauth/acme');
    for (const elsewhere of ['https://evil.example/', '//evil.example/x', '/v0/oauth/acme/../../x']) {
      assert.equal((await login(elsewhere)).headers.get('location'), '/dashboard', elsewhere);
    }
    const cookie = (back.headers.get('set-cookie') ?? '').split(';')[0]!;
    const page = await fetch(`${gateway.url}/v0/oauth/acme`, { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Start sign-in/);
    const started = await fetch(`${gateway.url}/v0/oauth/acme/sessions`, { method: 'POST', headers: { cookie } });
    assert.equal(started.status, 201, 'the JSON API takes the browser session');
  });
});

describe('/v0/oauth: starting, polling and cancelling sign-ins', async () => {
  const { call, gateway } = await start();
  before(() => {
    auth.script = ['token'];
  });

  test('an unknown flow is 404 flow_not_found, naming the flows there are', async () => {
    const response = await call('/v0/oauth/nope/sessions', { method: 'POST' });
    assert.equal(response.status, 404);
    const body = await json(response);
    assert.equal(body.error.code, 'flow_not_found');
    assert.deepEqual(body.error.details.flows, ['acme', 'broken', 'cloud-coding-assistant', 'code-assistant']);
    const page = await call('/v0/oauth/nope');
    assert.equal(page.status, 404);
    assert.match(await page.text(), /no sign-in flow named <code>nope<\/code>/);
    assert.equal((await call('/v0/oauth/sessions/unknown-id')).status, 404);
    assert.equal((await json(await call('/v0/oauth/sessions/unknown-id'))).error.code, 'session_not_found');
  });

  test('bad options are 422 naming the field; nothing is asked of the authorization server', async () => {
    // Sign-ins of earlier tests may still poll the token endpoint: count only requests that start one.
    const starts = () => auth.requests.filter((r) => !r.path.endsWith('/token')).length;
    const before = starts();
    const cases: [string, unknown, string][] = [
      ['/v0/oauth/cloud-coding-assistant/sessions', { mode: 'identity-center', region: 'eu-central-1' }, 'start_url'],
      [
        '/v0/oauth/cloud-coding-assistant/sessions',
        { mode: 'identity-center', start_url: 'https://x.example/start', region: 'moon' },
        'region',
      ],
      [
        '/v0/oauth/cloud-coding-assistant/sessions',
        { mode: 'identity-center', start_url: 'http://x.example/start', region: 'us-east-1' },
        'start_url',
      ],
      ['/v0/oauth/cloud-coding-assistant/sessions', { mode: 'team' }, 'mode'],
      ['/v0/oauth/cloud-coding-assistant/sessions', {}, 'mode'],
      ['/v0/oauth/acme/sessions', { mode: 'builder-id' }, 'mode'],
      ['/v0/oauth/acme/sessions', { priority: 'high' }, 'priority'],
    ];
    for (const [route, body, field] of cases) {
      const response = await call(route, { method: 'POST', body });
      assert.equal(response.status, 422, JSON.stringify(body));
      const error = (await json(response)).error;
      assert.equal(error.code, 'validation_failed');
      assert.ok(
        error.details.issues.some((issue: { field: string }) => issue.field === field),
        `${JSON.stringify(body)} names ${field}: ${JSON.stringify(error.details)}`,
      );
    }
    assert.equal((await call('/v0/oauth/acme/sessions', { method: 'POST', body: '{not json' })).status, 400);
    assert.equal(starts(), before);
  });

  test('pending, slow_down, then a token: the credential is stored (0600) and serves a request upstream', async () => {
    auth.script = ['authorization_pending', 'slow_down', 'token'];
    const response = await call('/v0/oauth/acme/sessions', { method: 'POST', body: { priority: 3 } });
    assert.equal(response.status, 201);
    const started = await json(response);
    assert.match(started.session_id, /^[A-Za-z0-9_-]{22}$/);
    assert.match(started.user_code, /^USER-\d+$/);
    assert.equal(started.verification_uri, `${auth.url}/activate`);
    assert.equal(started.verification_uri_complete, `${auth.url}/activate?code=${started.user_code}`);
    assert.equal(started.interval, 0.05);
    assert.ok(Date.parse(started.expires_at) > Date.now());
    assert.equal((await json(await call(`/v0/oauth/sessions/${started.session_id}`))).status, 'pending');

    const done = await settled(call, started.session_id);
    assert.equal(done.status, 'succeeded');
    const id = done.credential_id as string;
    assert.match(id, /^acme-[0-9a-f]{8}$/);
    const polls = auth.calls('/rfc/token').filter((r) => r.body.device_code === `dc-${started.user_code.slice(5)}`);
    assert.equal(polls.length, 3, 'pending, slow_down, token');
    assert.equal(polls[0]!.body.client_secret, 'hush-client-secret', 'a confidential client sends its secret');

    const record = gateway.credentials.manager.describe(id);
    assert.equal(record.provider, 'acme');
    assert.equal(record.priority, 3);
    const file = await stat(join(gateway.credentials.opened.fileStore!.directory, `${id}.json`));
    assert.equal(file.mode & 0o777, 0o600);

    const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-client' },
      body: JSON.stringify({ model: 'acme-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(answer.status, 200);
    assert.equal(upstream.requests.at(-1)!.headers.authorization, `Bearer access-${polls[0]!.body.device_code}`);
    assert.doesNotMatch(JSON.stringify(await json(await call(`/v0/oauth/sessions/${started.session_id}`))), /access-dc/);
  });

  test('access_denied ends failed, expired_token ends expired', async () => {
    for (const [step, status] of [
      ['access_denied', 'failed'],
      ['expired_token', 'expired'],
    ] as const) {
      auth.script = ['authorization_pending', step];
      const started = await json(await call('/v0/oauth/acme/sessions', { method: 'POST' }));
      const done = await settled(call, started.session_id);
      assert.equal(done.status, status, step);
      assert.equal(done.error.code, step);
      assert.equal(done.credential_id, undefined);
    }
  });

  test('DELETE cancels a pending sign-in; the session stays readable as failed (cancelled)', async () => {
    auth.script = ['await_user'];
    const started = await json(await call('/v0/oauth/acme/sessions', { method: 'POST' }));
    const cancelled = await json(await call(`/v0/oauth/sessions/${started.session_id}`, { method: 'DELETE' }));
    assert.equal(cancelled.status, 'failed');
    assert.equal(cancelled.error.code, 'cancelled');
    assert.equal((await json(await call(`/v0/oauth/sessions/${started.session_id}`))).error.code, 'cancelled');
  });

  test('past 32 pending sign-ins the next is 429 too_many_requests; cancelling one makes room', async () => {
    auth.script = Array.from({ length: 40 }, () => 'await_user' as const);
    const ids: string[] = [];
    try {
      let refused: Response | undefined;
      for (let i = 0; i < 40 && !refused; i++) {
        const response = await call('/v0/oauth/acme/sessions', { method: 'POST' });
        if (response.status === 429) refused = response;
        else ids.push((await json(response)).session_id);
      }
      assert.ok(refused, 'a limit was reached');
      assert.ok(ids.length <= 32, `${ids.length} pending before the refusal`);
      assert.equal((await json(refused)).error.code, 'too_many_requests');
      await call(`/v0/oauth/sessions/${ids.pop()}`, { method: 'DELETE' });
      const again = await call('/v0/oauth/acme/sessions', { method: 'POST' });
      assert.equal(again.status, 201);
      ids.push((await json(again)).session_id);
    } finally {
      for (const id of ids) await call(`/v0/oauth/sessions/${id}`, { method: 'DELETE' });
      auth.script = ['token'];
    }
  });

  test('cloud coding-assistant: identity-center signs in at the chosen start URL and region', async () => {
    auth.script = ['authorization_pending', 'token'];
    const response = await call('/v0/oauth/cloud-coding-assistant/sessions', {
      method: 'POST',
      body: { mode: 'identity-center', start_url: 'https://my-org.awsapps.com/start', region: 'eu-central-1' },
    });
    assert.equal(response.status, 201);
    const started = await json(response);
    assert.equal(auth.calls('/oidc/eu-central-1/device_authorization').at(-1)!.body.startUrl, 'https://my-org.awsapps.com/start');
    const done = await settled(call, started.session_id);
    assert.equal(done.status, 'succeeded');
    const record = gateway.credentials.manager.describe(done.credential_id);
    assert.equal(record.provider, 'cloud');
    assert.equal(record.label, 'identity-center my-org.awsapps.com');
  });

  test('an authorization server that refuses the device code request is 502', async () => {
    const response = await call('/v0/oauth/broken/sessions', { method: 'POST' });
    assert.equal(response.status, 502);
    assert.equal((await json(response)).error.code, 'bad_gateway');
  });

  test('the client secret is redacted from /config; the routes are in /openapi.json', async () => {
    const text = await (await call('/v0/management/config')).text();
    assert.doesNotMatch(text, /hush-client-secret/);
    const paths = Object.keys((await json(await fetch(`${gateway.url}/openapi.json`))).paths);
    for (const path of ['/v0/oauth/{flow}/sessions', '/v0/oauth/sessions/{id}']) assert.ok(paths.includes(path), path);
  });

  test("a reload that changes a provider's oauth block says a restart is needed", () => {
    const changed = parseConfig(config(`{ secret-key: ${KEY} }`).replace('client_id: switchyard-test', 'client_id: another-client'));
    assert.ok(gateway.reload(changed).restartNeeded.includes('providers.*.oauth'));
  });
});
