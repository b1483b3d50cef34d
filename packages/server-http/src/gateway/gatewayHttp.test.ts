import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parseConfig } from './config/load.js';
import { CONTROL_PLANE_BODY_LIMIT } from './controlPlane.js';
import { Gateway } from './gateway.js';

// The gateway's HTTP behaviour across both planes: methods a path does not serve, and `Expect: 100-continue`.
const KEY = 'http-secret';
const authDir = await mkdtemp(join(tmpdir(), 'gateway-http-'));
const gateway = await Gateway.start({
  config: parseConfig(`
port: 0
auth-dir: ${authDir}
api-keys: [sk-client]
remote-management: { secret-key: ${KEY} }
providers:
  alpha: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
`),
  logDestination: { write() {} },
});
after(async () => {
  await gateway.close();
  await rm(authDir, { recursive: true, force: true });
});

const call = (path: string, method: string, key: string | null = KEY) =>
  fetch(`${gateway.url}${path}`, { method, headers: key === null ? {} : { authorization: `Bearer ${key}` } });

async function assertMethodNotAllowed(path: string, method: string, allow: string) {
  const response = await call(path, method);
  assert.equal(response.status, 405, `${method} ${path}`);
  assert.equal(response.headers.get('allow'), allow, `${method} ${path}`);
  const { error } = (await response.json()) as { error: { code: string; message: string } };
  assert.equal(error.code, 'method_not_allowed');
  assert.ok(error.message.includes(allow), error.message);
}

describe('control plane: a wrong method is 405 with Allow', () => {
  test('management routes', async () => {
    await assertMethodNotAllowed('/v0/management/config', 'DELETE', 'GET, HEAD');
    await assertMethodNotAllowed('/v0/management/config.yaml', 'POST', 'GET, HEAD, PUT');
    await assertMethodNotAllowed('/v0/management/auths/alpha', 'POST', 'DELETE, GET, HEAD, PUT');
    await assertMethodNotAllowed('/v0/management/quota-exceeded/switch-project', 'DELETE', 'GET, HEAD, PATCH, PUT');
  });

  test('operations routes', async () => {
    await assertMethodNotAllowed('/v0/operations/providers/alpha/cooldown', 'GET', 'POST');
    await assertMethodNotAllowed('/v0/operations/providers/status', 'POST', 'GET, HEAD');
  });

  test('pages and public routes', async () => {
    await assertMethodNotAllowed('/dashboard', 'DELETE', 'GET, HEAD');
    await assertMethodNotAllowed('/dashboard/login', 'GET', 'POST');
    await assertMethodNotAllowed('/health', 'POST', 'GET, HEAD');
    await assertMethodNotAllowed('/openapi.json', 'PUT', 'GET, HEAD');
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

interface Outcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Whether the gateway sent `100 Continue`. */
  continued: boolean;
}

/**
 * A raw request announcing `Expect: 100-continue` and `contentLength` bytes. `body`, when given, is
 * sent only once the gateway answers 100; without it nothing is ever uploaded.
 */
function expectContinue(path: string, headers: Record<string, string>, contentLength: number, body?: string): Promise<Outcome> {
  const { port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = request({
      host: '127.0.0.1',
      port,
      path,
      method: path.startsWith('/v1/') ? 'POST' : 'PUT',
      headers: { ...headers, expect: '100-continue', 'content-length': String(contentLength) },
    });
    req.on('continue', () => {
      continued = true;
      if (body !== undefined) req.end(body);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), continued });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

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
