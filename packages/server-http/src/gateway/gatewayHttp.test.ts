import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { assertMethodNotAllowed, sendExpectingContinue } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';
import { CONTROL_PLANE_BODY_LIMIT } from './controlPlane.js';

// The gateway's HTTP behaviour across both planes: methods a path does not serve, and `Expect: 100-continue`.
const KEY = 'http-secret';
const authDir = await mkdtemp(join(tmpdir(), 'gateway-http-'));
const { gateway } = await startTestGateway(`
port: 0
auth-dir: ${authDir}
api-keys: [sk-client]
remote-management: { secret-key: ${KEY} }
providers:
  alpha: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
`);
after(async () => {
  await rm(authDir, { recursive: true, force: true });
});

const call = (path: string, method: string, key: string | null = KEY) =>
  fetch(`${gateway.url}${path}`, { method, headers: key === null ? {} : { authorization: `Bearer ${key}` } });

const assertWrongMethod = async (path: string, method: string, allow: string) =>
  assertMethodNotAllowed(await call(path, method), allow, `${method} ${path}`);

describe('control plane: a wrong method is 405 with Allow', () => {
  test('management routes', async () => {
    await assertWrongMethod('/v0/management/config', 'DELETE', 'GET, HEAD');
    await assertWrongMethod('/v0/management/config.yaml', 'POST', 'GET, HEAD, PUT');
    await assertWrongMethod('/v0/management/auths/alpha', 'POST', 'DELETE, GET, HEAD, PUT');
    await assertWrongMethod('/v0/management/quota-exceeded/switch-project', 'DELETE', 'GET, HEAD, PATCH, PUT');
  });

  test('operations routes', async () => {
    await assertWrongMethod('/v0/operations/providers/alpha/cooldown', 'GET', 'POST');
    await assertWrongMethod('/v0/operations/providers/status', 'POST', 'GET, HEAD');
  });

  test('pages and public routes', async () => {
    await assertWrongMethod('/dashboard', 'DELETE', 'GET, HEAD');
    await assertWrongMethod('/dashboard/login', 'GET', 'POST');
    await assertWrongMethod('/health', 'POST', 'GET, HEAD');
    await assertWrongMethod('/openapi.json', 'PUT', 'GET, HEAD');
  });

  test('a path no route has stays 404, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const response = await call('/v0/management/nothing-here', method);
      assert.equal(response.status, 404);
      assert.equal(response.headers.get('allow'), null);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'not_found');
    }
  });

  test('without the management key a wrong method is 401: which routes exist is not told', async () => {
    const response = await call('/v0/management/config', 'DELETE', null);
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('allow'), null);
  });

  test('Allow agrees with /openapi.json for every documented path', async () => {
    const doc = (await (await call('/openapi.json', 'GET')).json()) as { paths: Record<string, Record<string, unknown>> };
    const paths = Object.entries(doc.paths);
    assert.ok(paths.length > 20, 'the document lists the control plane');
    for (const [template, operations] of paths) {
      const documented = new Set(Object.keys(operations).map((method) => method.toUpperCase()));
      if (documented.has('GET')) documented.add('HEAD');
      // No route serves OPTIONS, so it probes every path; `{param}` becomes a value the route accepts.
      const path = template.replace(/\{[^}]+\}/g, 'alpha');
      const response = await call(path, 'OPTIONS');
      assert.equal(response.status, 405, `OPTIONS ${path}`);
      assert.equal(response.headers.get('allow'), [...documented].sort().join(', '), template);
    }
  });
});

/** A raw request announcing `Expect: 100-continue`; `body`, when given, is uploaded only after a 100. */
const expectContinue = (path: string, headers: Record<string, string>, contentLength: number, body?: string, method?: string) =>
  sendExpectingContinue(`${gateway.url}${path}`, {
    method: method ?? (path.startsWith('/v1/') ? 'POST' : 'PUT'),
    headers,
    contentLength,
    ...(body === undefined ? {} : { body }),
  });

describe('Expect: 100-continue', () => {
  test('a data-plane body over its cap gets 413 in the OpenAI shape and never a 100', async () => {
    const oversized = gateway.dataPlane.maxBodyBytes + 1;
    const outcome = await expectContinue(
      '/v1/chat/completions',
      { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
      oversized,
    );
    assert.equal(outcome.continued, false, 'no 100 Continue');
    assert.equal(outcome.status, 413);
    const { error } = JSON.parse(outcome.body);
    assert.equal(error.code, 'payload_too_large');
    assert.equal(error.type, 'invalid_request_error', 'the OpenAI error shape');
    // The upload never came, so the connection cannot carry another request.
    assert.equal(outcome.headers.connection, 'close');
  });

  test('a control-plane body over its cap gets 413 in the control plane shape and never a 100', async () => {
    const outcome = await expectContinue(
      '/v0/management/config.yaml',
      { authorization: `Bearer ${KEY}`, 'content-type': 'application/yaml' },
      CONTROL_PLANE_BODY_LIMIT + 1,
    );
    assert.equal(outcome.continued, false, 'no 100 Continue');
    assert.equal(outcome.status, 413);
    assert.deepEqual(Object.keys(JSON.parse(outcome.body).error).sort(), ['code', 'message']);
    assert.equal(JSON.parse(outcome.body).error.code, 'payload_too_large');
    assert.equal(outcome.headers.connection, 'close');
  });

  test('a body within the cap gets its 100, is uploaded and answered as usual', async () => {
    const body = JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: 'continue please' }] });
    const outcome = await expectContinue(
      '/v1/chat/completions',
      { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
      Buffer.byteLength(body),
      body,
    );
    assert.equal(outcome.continued, true);
    assert.equal(outcome.status, 200, outcome.body);
    assert.match(JSON.parse(outcome.body).choices[0].message.content, /You said: continue please/);
  });

  test('a control-plane body within the cap gets its 100 too', async () => {
    const body = JSON.stringify({ value: false });
    const outcome = await expectContinue(
      '/v0/management/quota-exceeded/switch-project',
      { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      Buffer.byteLength(body),
      body,
    );
    assert.equal(outcome.continued, true);
    assert.equal(outcome.status, 200, outcome.body);
    assert.deepEqual(JSON.parse(outcome.body), { 'switch-project': false });
  });
});

describe('Expect: 100-continue: what is refused without the body is refused before the 100', () => {
  const json = { 'content-type': 'application/json' };
  const body = JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: 'hi' }] });

  test('the data plane: a wrong or missing key is 401, an unknown path 404, a wrong method 405, a wrong type 415', async () => {
    const refusals: [what: string, path: string, method: string, headers: Record<string, string>, status: number][] = [
      ['a wrong key', '/v1/chat/completions', 'POST', { ...json, authorization: 'Bearer sk-wrong' }, 401],
      ['no key', '/v1/chat/completions', 'POST', json, 401],
      ['a wrong Gemini query key', '/v1beta/models/demo-model:generateContent?key=sk-wrong', 'POST', json, 401],
      ['an unknown path', '/v1/nothing-here', 'POST', { ...json, authorization: 'Bearer sk-client' }, 404],
      ['a wrong method', '/v1/chat/completions', 'PUT', { ...json, authorization: 'Bearer sk-client' }, 405],
      ['a wrong media type', '/v1/chat/completions', 'POST', { 'content-type': 'text/plain', authorization: 'Bearer sk-client' }, 415],
    ];
    for (const [what, path, method, headers, status] of refusals) {
      const outcome = await expectContinue(path, headers, Buffer.byteLength(body), body, method);
      assert.deepEqual([outcome.status, outcome.continued], [status, false], `${what}: ${outcome.body}`);
      assert.equal(typeof JSON.parse(outcome.body).error.message, 'string', `${what}: the client family's error shape`);
      assert.doesNotMatch(outcome.body, /sk-wrong|sk-client/, 'no key is echoed');
    }
  });

  test('the control plane: no management key is 401 before the 100, with a declared length or chunked', async () => {
    const outcome = await expectContinue('/v0/management/config.yaml', { 'content-type': 'application/yaml' }, 10, 'port: 8317\n');
    assert.deepEqual([outcome.status, outcome.continued], [401, false]);
    const chunked = await sendExpectingContinue(`${gateway.url}/v0/management/config.yaml`, {
      method: 'PUT',
      headers: { 'content-type': 'application/yaml' },
      body: 'port: 8317\n',
    });
    assert.deepEqual([chunked.status, chunked.continued], [401, false]);
  });

  test('PUT /config.yaml: a config declared over 1 MiB is 413 before the 100', async () => {
    const outcome = await expectContinue(
      '/v0/management/config.yaml',
      { authorization: `Bearer ${KEY}`, 'content-type': 'application/yaml' },
      1024 * 1024 + 1,
    );
    assert.deepEqual([outcome.status, outcome.continued], [413, false], outcome.body);
    assert.equal(JSON.parse(outcome.body).error.code, 'payload_too_large');
  });
});

describe('PUT /config.yaml refuses a config over 1 MiB by its declared length', () => {
  test('without Expect, the 413 comes before the body is sent', async () => {
    const { port } = new URL(gateway.url);
    const declared = 2 * 1024 * 1024;
    assert.ok(declared < CONTROL_PLANE_BODY_LIMIT, 'within the control plane cap: only the route cap refuses it');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        path: '/v0/management/config.yaml',
        method: 'PUT',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/yaml', 'content-length': String(declared) },
      });
      // Only the first line is ever sent: an answer that waits for the whole body never comes.
      const timer = setTimeout(() => reject(new Error('no answer before the body was sent')), 5000);
      req.on('response', (res) => {
        clearTimeout(timer);
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', reject);
      req.write('port: 8317\n');
    });
    assert.equal(status, 413);
  });
});

test('PUT /config.yaml: a chunked config is refused once it grows past 1 MiB', async () => {
  const oversized = `# ${'x'.repeat(1024 * 1024)}\nport: 8317\n`;
  const response = await fetch(`${gateway.url}/v0/management/config.yaml`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/yaml' },
    // A stream has no declared length, so it goes chunked.
    body: new Blob([oversized]).stream(),
    duplex: 'half',
  } as RequestInit);
  assert.equal(response.status, 413);
  assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'payload_too_large');
});
