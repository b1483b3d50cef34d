import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { parseConfig } from './config/load.js';
import { Gateway } from './gateway.js';

const KEY = 'methods-secret';
const gateway = await Gateway.start({
  config: parseConfig(`
port: 0
remote-management: { secret-key: ${KEY} }
providers:
  alpha: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
`),
  logDestination: { write() {} },
});
after(() => gateway.close());

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
