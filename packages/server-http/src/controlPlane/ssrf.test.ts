import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { assertCallableUrl, assertDestinationAllowed, blockedRange, guardedAgent, type LookupFunction, SsrfBlocked } from './ssrf.js';

describe('SSRF guard', () => {
  test('classifies addresses', () => {
    const cases: [string, string | undefined][] = [
      ['127.0.0.1', 'loopback'],
      ['127.9.9.9', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.20.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'private'],
      ['fd12::1', 'private'],
      ['169.254.169.254', 'metadata'],
      ['fd00:ec2::254', 'metadata'],
      ['169.254.10.10', 'link-local'],
      ['fe80::1', 'link-local'],
      ['0.0.0.0', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['::ffff:10.0.0.1', 'private'],
      ['8.8.8.8', undefined],
      ['2606:4700::1111', undefined],
      ['172.32.0.1', undefined],
      // IPv4 inside IPv6: NAT64 (well-known and local-use prefixes), 6to4, IPv4-compatible, hex-mapped.
      ['64:ff9b::a9fe:a9fe', 'metadata'],
      ['64:ff9b::127.0.0.1', 'loopback'],
      ['64:ff9b:1::a00:1', 'private'],
      ['64:ff9b::808:808', undefined],
      ['2002:7f00:1::', 'loopback'],
      ['2002:c0a8:101::1', 'private'],
      ['2002:808:808::1', undefined],
      ['::7f00:1', 'reserved'],
      ['::10.0.0.1', 'reserved'],
      ['::ffff:7f00:1', 'loopback'],
      ['fec0::1', 'private'],
      ['2001:db8::1', 'reserved'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
      ['100::1', 'reserved'],
      // Documentation ranges (RFC 5737): never routed, so never a real destination. NAT64 and 6to4 carry the verdict.
      ['192.0.2.1', 'reserved'],
      ['198.51.100.77', 'reserved'],
      ['203.0.113.7', 'reserved'],
      ['64:ff9b::cb00:7107', 'reserved'],
      ['2002:c633:6401::1', 'reserved'],
      ['2001:db8:ffff:ffff::1', 'reserved'],
      ['192.0.3.1', undefined],
      ['198.51.101.1', undefined],
      ['203.0.114.1', undefined],
      ['2a00:1450:4001:81b::200e', undefined],
    ];
    for (const [address, expected] of cases) assert.equal(blockedRange(address), expected, address);
  });

  test('literal addresses and odd schemes are refused before any lookup', () => {
    assert.throws(() => assertCallableUrl('http://169.254.169.254/latest/meta-data', { allow: [] }), SsrfBlocked);
    assert.throws(() => assertCallableUrl('http://[::1]:8080/', { allow: [] }), SsrfBlocked);
    assert.throws(() => assertCallableUrl('file:///etc/passwd', { allow: [] }), /only http and https/);
    assert.throws(() => assertCallableUrl('gopher://example.com', { allow: [] }), /only http and https/);
    assert.equal(assertCallableUrl('http://127.0.0.1:1/', { allow: ['127.0.0.1'] }).hostname, '127.0.0.1');
  });

  const server = createServer((_req, res) => res.end('reached'));
  after(() => server.close());

  test('a hostname resolving to a blocked address is refused at connect time; allow-listed ones pass', async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    let connects = 0;
    server.on('connection', () => connects++);
    const blocked = guardedAgent({ allow: [] });
    await assert.rejects(request(`http://localhost:${port}/`, { dispatcher: blocked }), (error: Error) => {
      const cause = (error as { cause?: unknown }).cause ?? error;
      return cause instanceof SsrfBlocked || /not allowed/.test(String((cause as Error).message));
    });
    assert.equal(connects, 0, 'nothing reached the server');
    // A resolver that answers with a public address first and a private one second is still refused.
    const sneaky = guardedAgent({ allow: [] }, ((
      _host: string,
      _opts: unknown,
      cb: (e: null, a: { address: string; family: number }[]) => void,
    ) =>
      cb(null, [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ])) as never);
    await assert.rejects(request(`http://rebind.test:${port}/`, { dispatcher: sneaky }));
    assert.equal(connects, 0);
    const allowed = guardedAgent({ allow: ['localhost'] });
    const response = await request(`http://localhost:${port}/`, { dispatcher: allowed });
    assert.equal(await response.body.text(), 'reached');
    await Promise.all([blocked.close(), sneaky.close(), allowed.close()]);
  });
});

describe('assertDestinationAllowed: a URL the gateway will call later', () => {
  /** A resolver answering from a table, counting the names it was asked. */
  const table = (answers: Record<string, string[]>) => {
    const asked: string[] = [];
    const resolve = ((
      host: string,
      _options: unknown,
      cb: (error: Error | null, addresses?: { address: string; family: number }[]) => void,
    ) => {
      asked.push(host);
      const addresses = answers[host];
      if (!addresses) return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
      cb(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    }) as unknown as LookupFunction;
    return { resolve, asked };
  };

  test('a name resolving to any blocked address is refused; a public one passes', async () => {
    const { resolve } = table({ 'public.test': ['93.184.216.34'], 'mixed.test': ['93.184.216.34', '10.0.0.7'] });
    assert.equal((await assertDestinationAllowed('https://public.test/v1', { allow: [] }, { resolve })).hostname, 'public.test');
    await assert.rejects(assertDestinationAllowed('https://mixed.test/v1', { allow: [] }, { resolve }), (error: unknown) => {
      return error instanceof SsrfBlocked && error.range === 'private' && error.address === '10.0.0.7';
    });
  });

  test('the real resolver: localhost is loopback', async () => {
    await assert.rejects(assertDestinationAllowed('http://localhost:1/', { allow: [] }), (error: unknown) => {
      return error instanceof SsrfBlocked && error.range === 'loopback';
    });
  });

  test('an allowed name is not looked up; an unresolvable one is refused, since it cannot be vouched for', async () => {
    const { resolve, asked } = table({});
    await assertDestinationAllowed('http://Models.Internal/v1', { allow: ['models.internal'] }, { resolve });
    assert.deepEqual(asked, []);
    await assert.rejects(assertDestinationAllowed('http://nowhere.test/', { allow: [] }, { resolve }), { code: 'ENOTFOUND' });
  });

  test('a resolver that does not answer in time makes the host unresolvable, not a hang', { timeout: 5_000 }, async () => {
    const silent = (() => undefined) as unknown as LookupFunction;
    await assert.rejects(assertDestinationAllowed('http://slow.test/', { allow: [] }, { resolve: silent, lookupTimeoutMs: 20 }), {
      code: 'ETIMEOUT',
    });
  });

  test('credentials in the URL and other schemes are refused before any lookup', async () => {
    const { resolve, asked } = table({ 'public.test': ['93.184.216.34'] });
    await assert.rejects(assertDestinationAllowed('https://user:pw@public.test/', { allow: [] }, { resolve }), /credentials/);
    await assert.rejects(assertDestinationAllowed('ftp://public.test/', { allow: [] }, { resolve }), /only http and https/);
    await assert.rejects(assertDestinationAllowed('http://169.254.169.254/', { allow: [] }, { resolve }), SsrfBlocked);
    assert.deepEqual(asked, []);
    const smtp = await assertDestinationAllowed('smtp://public.test:587', { allow: [] }, { resolve, protocols: ['smtp:', 'smtps:'] });
    assert.equal(smtp.port, '587');
  });
});
