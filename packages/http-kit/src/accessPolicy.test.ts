import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AccessPolicy, assertSafeBind, isLoopbackHost, openLoopbackWarning, UnsafeBindError } from './accessPolicy.js';
import { ApiKeySet } from './apiKeys.js';

const loopback = new AccessPolicy({ bindHost: '127.0.0.1' });
const post = (headers: Record<string, string>, authorization: 'loopback' | 'cookie' | 'key' = 'loopback') =>
  loopback.check({ method: 'POST', headers: { host: '127.0.0.1:8317', ...headers }, authorization });

describe('binds', () => {
  test('a public bind without keys is refused, says how to set a key, and --insecure allows it', () => {
    assert.throws(
      () =>
        assertSafeBind({
          host: '0.0.0.0',
          hasKeys: false,
          server: 'the workflow API',
          howToSetKey: 'set api_keys in .agileplus/config.yaml',
        }),
      (error: unknown) => error instanceof UnsafeBindError && /api_keys/.test(error.message) && /--insecure/.test(error.message),
    );
    assert.doesNotThrow(() => assertSafeBind({ host: '0.0.0.0', hasKeys: false, insecure: true, server: 's', howToSetKey: 'k' }));
    assert.doesNotThrow(() => assertSafeBind({ host: '0.0.0.0', hasKeys: true, server: 's', howToSetKey: 'k' }));
    for (const host of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.8.9.10']) {
      assert.doesNotThrow(() => assertSafeBind({ host, hasKeys: false, server: 's', howToSetKey: 'k' }), host);
      assert.equal(isLoopbackHost(host), true, host);
    }
    assert.equal(isLoopbackHost('192.168.1.5'), false);
  });

  test('a server without keys starts with a warning: this machine on loopback, anyone on a public bind; keys give none', () => {
    assert.match(openLoopbackWarning({ host: '127.0.0.1', hasKeys: false, server: 'the agent session server' }) ?? '', /no client key/);
    assert.match(
      openLoopbackWarning({ host: '0.0.0.0', hasKeys: false, server: 'the agent session server' }) ?? '',
      /listens on 0\.0\.0\.0 with no client key \(--insecure\): anyone who can reach it/,
    );
    assert.equal(openLoopbackWarning({ host: '127.0.0.1', hasKeys: true, server: 's' }), undefined);
    assert.equal(openLoopbackWarning({ host: '0.0.0.0', hasKeys: true, server: 's' }), undefined);
  });
});

describe('Host allowlist (DNS rebinding)', () => {
  test('a foreign Host is refused where access rests on loopback or a cookie, not where a key authorizes', () => {
    const rebinding = { host: 'rebind.evil.example' };
    for (const authorization of ['loopback', 'cookie'] as const) {
      const refusal = loopback.check({ method: 'GET', headers: rebinding, authorization });
      assert.deepEqual([refusal?.status, refusal?.code], [403, 'forbidden'], authorization);
    }
    assert.equal(loopback.check({ method: 'GET', headers: rebinding, authorization: 'key' }), undefined);
  });

  test('loopback names, the bind address, the host of self_url and configured names are served', () => {
    const policy = new AccessPolicy({ bindHost: '10.0.0.7', selfUrl: 'https://gw.example.com', allowedHosts: ['internal.local:8080'] });
    for (const host of ['localhost:1', '127.0.0.1', '[::1]:80', '10.0.0.7:8317', 'gw.example.com', 'internal.local:8080']) {
      assert.equal(policy.hostAllowed(host), true, host);
    }
    for (const host of ['internal.local:9090', 'evil.example', '', 'a b']) assert.equal(policy.hostAllowed(host), false, host);
    assert.equal(new AccessPolicy({ bindHost: '0.0.0.0' }).hostAllowed('0.0.0.0'), false, 'a wildcard is not a name');
  });
});

describe('Origin', () => {
  test('a cross-origin state change authorized by loopback or a cookie is refused; same-origin and no Origin pass', () => {
    assert.equal(post({ origin: 'http://evil.example' })?.status, 403);
    assert.equal(post({ origin: 'http://evil.example' }, 'cookie')?.status, 403);
    assert.equal(post({ origin: 'null' })?.status, 403, 'a sandboxed or file page');
    assert.equal(post({ origin: 'http://127.0.0.1:8317' }), undefined);
    assert.equal(post({}), undefined, 'CLIs and SDKs send no Origin');
    assert.equal(post({ origin: 'http://evil.example' }, 'key'), undefined, 'a key is judged alone');
  });

  test('a websocket upgrade is checked whatever authorized it; an allowlisted origin passes', () => {
    const upgrade = (origin: string) =>
      loopback.check({ method: 'GET', headers: { host: '127.0.0.1:8317', origin }, authorization: 'key', upgrade: true });
    assert.equal(upgrade('http://evil.example')?.status, 403);
    const allowing = new AccessPolicy({ bindHost: '127.0.0.1', allowedOrigins: ['https://app.example.com'] });
    assert.equal(
      allowing.check({
        method: 'GET',
        headers: { host: '127.0.0.1', origin: 'https://app.example.com' },
        authorization: 'key',
        upgrade: true,
      }),
      undefined,
    );
  });

  test('Sec-Fetch-Site: cross-site without an Origin is refused too', () => {
    assert.equal(post({ 'sec-fetch-site': 'cross-site' })?.status, 403);
    assert.equal(post({ 'sec-fetch-site': 'same-origin' }), undefined);
  });
});

describe('content type', () => {
  test('a form post (text/plain, urlencoded) is refused; JSON and an empty body pass; multipart only where uploads are', () => {
    assert.equal(post({ 'content-type': 'text/plain', 'content-length': '5' })?.status, 415);
    assert.equal(post({ 'content-type': 'application/x-www-form-urlencoded', 'content-length': '5' })?.status, 415);
    assert.equal(post({ 'content-type': 'application/yaml', 'content-length': '5' })?.status, 415, 'YAML only where a route asks for it');
    const yamlRoute = (type: string) =>
      loopback.check({
        method: 'PUT',
        headers: { host: '127.0.0.1', 'content-type': type, 'content-length': '5' },
        authorization: 'loopback',
        alsoAccepts: ['application/yaml', 'text/plain'],
      })?.status;
    assert.equal(yamlRoute('application/yaml'), undefined);
    assert.equal(yamlRoute('text/plain'), 415, 'a type another site can send without a preflight is never taken, even when listed');
    assert.equal(post({ 'content-type': 'application/json; charset=utf-8', 'content-length': '2' }), undefined);
    assert.equal(post({ 'content-length': '0' }), undefined);
    const multipart = { host: '127.0.0.1', 'content-type': 'multipart/form-data; boundary=x', 'content-length': '10' };
    assert.equal(loopback.check({ method: 'POST', headers: multipart, authorization: 'loopback' })?.status, 415);
    assert.equal(loopback.check({ method: 'POST', headers: multipart, authorization: 'loopback', multipart: true }), undefined);
    assert.equal(post({ 'content-type': 'text/plain', 'content-length': '5' }, 'key'), undefined);
  });
});

describe('forwarded headers', () => {
  test('a loopback peer that forwards a request makes the caller remote unless it is a trusted proxy', () => {
    assert.equal(loopback.callerIsLocal('127.0.0.1', {}), true);
    assert.equal(loopback.callerIsLocal('::ffff:127.0.0.1', {}), true);
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
      assert.equal(loopback.callerIsLocal('127.0.0.1', { [header]: '203.0.113.9' }), false, header);
      assert.equal(loopback.forwardedByUntrustedPeer('127.0.0.1', { [header]: '203.0.113.9' }), true, header);
    }
    const proxied = new AccessPolicy({ bindHost: '127.0.0.1', trustedProxies: ['127.0.0.1'] });
    assert.equal(proxied.callerIsLocal('127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }), false, 'the client the proxy names is remote');
    assert.equal(proxied.callerIsLocal('127.0.0.1', { 'x-forwarded-for': '127.0.0.1' }), true);
    assert.equal(proxied.forwardedByUntrustedPeer('127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }), false);
    assert.equal(loopback.callerIsLocal('192.0.2.1', {}), false);
  });
});

describe('client keys with identities', () => {
  test('a named key identifies its holder; a bare key gets a positional name; a wrong key is nobody', () => {
    const keys = new ApiKeySet([
      'plain-key',
      { key: 'alice-key', name: 'alice', admin: true, tenant: 'team-a' },
      { key: 'bob-key', name: 'bob' },
    ]);
    assert.deepEqual(keys.identify('alice-key'), { name: 'alice', admin: true, tenant: 'team-a' });
    assert.deepEqual(keys.identify('bob-key'), { name: 'bob', admin: false, tenant: 'default' });
    assert.deepEqual(keys.identify('plain-key'), { name: 'key-1', admin: false, tenant: 'default' });
    assert.equal(keys.identify('nope'), undefined);
    assert.equal(keys.identify(undefined), undefined);
    assert.equal(keys.accepts('bob-key'), true);
    assert.equal(new ApiKeySet([]).identify('anything'), undefined);
  });

  test('only the whole key matches: a prefix, an extension, a one-character change and other case are refused', () => {
    const key = 'sk-live-0123456789abcdef';
    const keys = new ApiKeySet([{ key, name: 'live' }, 'another-key']);
    for (const near of [key.slice(0, -1), `${key}0`, `${key.slice(0, -1)}e`, key.toUpperCase(), ` ${key}`, '']) {
      assert.equal(keys.identify(near), undefined, near);
      assert.equal(keys.accepts(near), false, near);
    }
    assert.equal(keys.identify(key)?.name, 'live');
    assert.equal(keys.identify('another-key')?.name, 'key-2');
    // A key of any length or alphabet is hashed before it is compared.
    const unusual = `é${'x'.repeat(5_000)}`;
    assert.equal(new ApiKeySet([unusual]).identify(unusual)?.name, 'key-1');
    assert.equal(new ApiKeySet([unusual]).identify(unusual.slice(1)), undefined);
  });
});

test('rateLimitedWarning passes one message per interval, whatever the flood', async () => {
  const { rateLimitedWarning } = await import('./accessPolicy.js');
  let now = 0;
  const seen: string[] = [];
  const warn = rateLimitedWarning(
    (message) => seen.push(message),
    60_000,
    () => now,
  );
  for (let i = 0; i < 100; i++) warn(`flood ${i}`);
  now = 59_999;
  warn('still inside the minute');
  now = 60_000;
  warn('the next minute');
  assert.deepEqual(seen, ['flood 0', 'the next minute']);
});
