import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { type ServerType, serve } from '@hono/node-server';
import { FakeScheduler } from '@switchyard/runtime';
import { Hono } from 'hono';
import { lockoutBucket, managementAuth } from './managementAuth.js';

const servers: ServerType[] = [];
after(() => {
  for (const server of servers) server.close();
});

async function guarded(settings: { secret: string; allowRemote?: boolean; trusted?: string[] }, clock = new FakeScheduler(0)) {
  const config = { secret: settings.secret, allowRemote: settings.allowRemote ?? false, trusted: settings.trusted ?? [] };
  const auth = managementAuth({
    secretKey: () => config.secret,
    allowRemote: () => config.allowRemote,
    trustedProxies: () => config.trusted,
    clock,
  });
  const app = new Hono();
  app.use('/v0/management/*', auth.middleware);
  app.get('/v0/management/ping', (c) => c.json({ ok: true }));
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  const call = (headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${port}/v0/management/ping`, { headers });
  return { call, config, clock };
}

const code = async (response: Response) => ((await response.json()) as { error?: { code: string } }).error?.code;

describe('management auth', () => {
  test('an empty secret key hides every route with 404', async () => {
    const { call } = await guarded({ secret: '' });
    const response = await call({ authorization: 'Bearer anything' });
    assert.equal(response.status, 404);
    assert.equal(await code(response), 'not_found');
  });

  test('the key is accepted as Bearer or X-Management-Key; missing or wrong is 401', async () => {
    const { call } = await guarded({ secret: 's3cret' });
    assert.equal((await call({ authorization: 'Bearer s3cret' })).status, 200);
    assert.equal((await call({ 'x-management-key': 's3cret' })).status, 200);
    const missing = await call();
    assert.equal(missing.status, 401);
    assert.equal(await code(missing), 'unauthorized');
    assert.equal((await call({ authorization: 'Bearer s3cre' })).status, 401);
    assert.equal((await call({ 'x-management-key': 's3cret-and-more' })).status, 401);
  });

  test('5 wrong keys lock the address out for 30 minutes with 429 and Retry-After', async () => {
    const { call, clock } = await guarded({ secret: 's3cret' });
    for (let i = 0; i < 5; i++) assert.equal((await call({ authorization: 'Bearer wrong' })).status, 401);
    const locked = await call({ authorization: 'Bearer wrong' });
    assert.equal(locked.status, 429, 'a wrong key waits out the lockout');
    assert.equal(locked.headers.get('retry-after'), '1800');
    assert.equal((await call()).status, 429, 'so does a missing one');
    assert.equal((await call({ authorization: 'Bearer s3cret' })).status, 200, 'the right key is never locked out');
    for (let i = 0; i < 5; i++) await call({ authorization: 'Bearer wrong' });
    await clock.advance(29 * 60_000);
    assert.equal((await call({ authorization: 'Bearer wrong' })).headers.get('retry-after'), '60');
    await clock.advance(60_000);
    assert.equal((await call({ authorization: 'Bearer wrong' })).status, 401);
  });

  test('missing keys do not count toward the lockout; a success resets the count', async () => {
    const { call } = await guarded({ secret: 's3cret' });
    for (let i = 0; i < 10; i++) await call();
    for (let i = 0; i < 4; i++) await call({ authorization: 'Bearer wrong' });
    assert.equal((await call({ authorization: 'Bearer s3cret' })).status, 200);
    for (let i = 0; i < 4; i++) await call({ authorization: 'Bearer wrong' });
    assert.equal((await call({ authorization: 'Bearer s3cret' })).status, 200);
  });

  test('a non-local client gets 403 unless allow-remote; X-Forwarded-For counts only from trusted proxies', async () => {
    const viaProxy = await guarded({ secret: 's3cret', trusted: ['127.0.0.1'] });
    const remote = await viaProxy.call({ authorization: 'Bearer s3cret', 'x-forwarded-for': '203.0.113.7' });
    assert.equal(remote.status, 403);
    assert.equal(await code(remote), 'forbidden');
    assert.equal((await viaProxy.call({ authorization: 'Bearer s3cret', 'x-forwarded-for': '127.0.0.1' })).status, 200);
    viaProxy.config.allowRemote = true;
    assert.equal((await viaProxy.call({ authorization: 'Bearer s3cret', 'x-forwarded-for': '203.0.113.7' })).status, 200);
    const untrusted = await guarded({ secret: 's3cret' });
    assert.equal(
      (await untrusted.call({ authorization: 'Bearer s3cret', 'x-forwarded-for': '203.0.113.7' })).status,
      403,
      'a forwarding header from a peer that is not a trusted proxy makes the caller remote',
    );
    assert.equal((await untrusted.call({ authorization: 'Bearer s3cret' })).status, 200);
  });

  test('lockouts are per address: a locked-out remote client does not lock out localhost', async () => {
    const { call } = await guarded({ secret: 's3cret', trusted: ['127.0.0.1'], allowRemote: true });
    for (let i = 0; i < 5; i++) await call({ authorization: 'Bearer wrong', 'x-forwarded-for': '198.51.100.9' });
    assert.equal((await call({ authorization: 'Bearer wrong', 'x-forwarded-for': '198.51.100.9' })).status, 429);
    assert.equal((await call({ authorization: 'Bearer wrong' })).status, 401);
    assert.equal((await call({ authorization: 'Bearer s3cret' })).status, 200);
  });
});

describe('lockout buckets', () => {
  test('an IPv6 address counts with its /64, however it is written; IPv4 addresses stay their own', () => {
    const bucket = lockoutBucket('2001:db8:1:2::1');
    assert.equal(bucket, '2001:db8:1:2::/64');
    for (const same of [
      '2001:0db8:0001:0002:ffff:ffff:ffff:ffff',
      '2001:DB8:1:2:0:0:0:9',
      '2001:db8:1:2::192.0.2.1',
      '2001:db8:1:2::1%eth0',
    ]) {
      assert.equal(lockoutBucket(same), bucket, same);
    }
    assert.notEqual(lockoutBucket('2001:db8:1:3::1'), bucket);
    assert.equal(lockoutBucket('::1'), '0:0:0:0::/64');
    assert.equal(lockoutBucket('198.51.100.7'), '198.51.100.7');
    assert.equal(lockoutBucket('not an address'), 'not an address');
  });
});
