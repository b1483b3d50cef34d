/**
 * Attacks on the gateway, each performed over a real socket and refused (issue 24, items 2, 5, 6, 7 and the
 * gateway's part of 12): a web page reaching a key-less `/v1` on loopback (DNS rebinding, a cross-site websocket,
 * a cross-origin POST), a reload that opens a public bind, a reverse proxy on the same host making everyone
 * local, a page locking the operator out of management, IPv6 callers rotating through a /64, a session cookie
 * without `Secure` behind TLS, a malformed `%` in a path, and a log follower that never reads. The bind rule counts
 * runtime client keys as keys: with one, `/v1` takes no key-less caller.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { managementAuth } from '../controlPlane/managementAuth.js';
import { parseConfig } from './config/load.js';
import { Gateway, UnsafeBindError } from './gateway.js';
import { LOG_FOLLOW_QUEUE } from './logTail.js';

const SECRET = 'a-management-key-of-forty-characters-xx';
const PROVIDERS = `providers:
  demo: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
`;

/** A gateway whose log lines the test can read. */
async function startGateway(yaml: string, options: { configPath?: string; insecure?: boolean } = {}) {
  const lines: string[] = [];
  const gateway = await Gateway.start({
    config: parseConfig(yaml),
    ...(options.configPath ? { configPath: options.configPath } : {}),
    ...(options.insecure ? { insecure: true } : {}),
    logDestination: {
      write(chunk: string) {
        lines.push(...chunk.split('\n').filter(Boolean));
      },
    },
  });
  after(() => gateway.close());
  return { gateway, lines, port: Number(new URL(gateway.url).port) };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A raw request to 127.0.0.1, so the test sets Host, Origin and forwarding headers as an attacker would. */
function send(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: { host: `127.0.0.1:${port}`, ...headers, ...(body !== undefined ? { 'content-length': Buffer.byteLength(body) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A websocket handshake; resolves with the status of the answer (101 when it upgraded). */
function upgrade(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\r\n');
      if (end === -1) return;
      socket.destroy();
      resolve(Number(text.slice(0, end).split(' ')[1]));
    });
    socket.on('error', reject);
    const lines = [
      `GET ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version: 13',
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

const chat = JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: 'hi' }] });
const json = { 'content-type': 'application/json' };
const form = { 'content-type': 'application/x-www-form-urlencoded' };
const EVIL = 'http://evil.example';

// A key-less gateway on loopback, as a developer runs it; management on, no trusted proxies.
const open = await startGateway(`port: 0\nremote-management: { secret-key: ${SECRET} }\n${PROVIDERS}`);
// The same with client keys.
const keyed = await startGateway(`port: 0\napi-keys: [sk-client]\n${PROVIDERS}`);
// Behind a reverse proxy on this host (127.0.0.1 trusted), management open to remote callers, a short secret key.
const proxied = await startGateway(
  `port: 0\napi-keys: [sk-client]\nremote-management: { secret-key: short-management-key, allow-remote: true, trusted-proxies: ['127.0.0.1'] }\n${PROVIDERS}`,
);

describe('/v1 without api-keys on loopback', () => {
  test('a foreign Host (DNS rebinding) cannot read /v1/models; the gateway’s own names can', async () => {
    const rebound = await send(open.port, 'GET', '/v1/models', { host: 'rebind.evil.example' });
    assert.equal(rebound.status, 403, rebound.text);
    assert.match(rebound.text, /rebind\.evil\.example/);
    const withPort = await send(open.port, 'GET', '/v1/models', { host: `rebind.evil.example:${open.port}` });
    assert.equal(withPort.status, 403);
    for (const host of [`127.0.0.1:${open.port}`, `localhost:${open.port}`, 'localhost']) {
      assert.equal((await send(open.port, 'GET', '/v1/models', { host })).status, 200, host);
    }
  });

  test('a cross-site websocket upgrade to /v1/responses or /v1/ws is refused; one with no Origin, or its own, upgrades', async () => {
    for (const path of ['/v1/responses', '/v1/ws']) {
      assert.equal(await upgrade(open.port, path, { Origin: EVIL }), 403, path);
      assert.equal(await upgrade(open.port, path, { Origin: 'null' }), 403, `${path} from an opaque origin`);
      assert.equal(await upgrade(open.port, path, {}), 101, `${path} from a CLI`);
      assert.equal(await upgrade(open.port, path, { Origin: `http://127.0.0.1:${open.port}` }), 101, `${path} same origin`);
    }
  });

  test('a cross-origin POST authorized by loopback alone is refused; an SDK’s (no Origin) is served', async () => {
    const crossSite = await send(open.port, 'POST', '/v1/chat/completions', { ...json, origin: EVIL }, chat);
    assert.equal(crossSite.status, 403, crossSite.text);
    // Another local port is another origin (same site): a page served there is refused too.
    const otherPort = await send(open.port, 'POST', '/v1/chat/completions', { ...json, origin: 'http://localhost:5173' }, chat);
    assert.equal(otherPort.status, 403);
    const sdk = await send(open.port, 'POST', '/v1/chat/completions', json, chat);
    assert.equal(sdk.status, 200, sdk.text);
  });

  test('a form-encoded, text/plain or untyped body (what a page can send without CORS) is refused', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
      const answer = await send(open.port, 'POST', '/v1/chat/completions', { 'content-type': type }, chat);
      assert.equal(answer.status, 415, type);
    }
    // A page's fetch with a Blob body sends no content type at all, still without CORS.
    const untyped = await send(open.port, 'POST', '/v1/chat/completions', {}, chat);
    assert.equal(untyped.status, 415, untyped.text);
  });

  test('keyed requests are judged on the key: a foreign Host and an Origin pass with it; a cross-site websocket does not', async () => {
    const auth = { authorization: 'Bearer sk-client' };
    assert.equal((await send(keyed.port, 'GET', '/v1/models', { ...auth, host: 'gateway.example.com' })).status, 200);
    assert.equal((await send(keyed.port, 'POST', '/v1/chat/completions', { ...auth, ...json, origin: EVIL }, chat)).status, 200);
    assert.equal((await send(keyed.port, 'GET', '/v1/models', { host: 'gateway.example.com' })).status, 401);
    assert.equal(await upgrade(keyed.port, '/v1/responses', { ...auth, Origin: EVIL }), 403);
    assert.equal(await upgrade(keyed.port, '/v1/responses', auth), 101);
  });

  test('a malformed % escape in a /v1 path is a 400, not a 500', async () => {
    for (const path of ['/v1/models/%E0%A4%A', '/v1beta/models/%ZZ', '/v1beta/models/demo%:generateContent']) {
      const answer = await send(open.port, path.includes(':') ? 'POST' : 'GET', path, json, path.includes(':') ? '{}' : undefined);
      assert.equal(answer.status, 400, `${path}: ${answer.text}`);
    }
  });
});

describe('forwarded headers from a loopback peer that is not a trusted proxy', () => {
  test('make the caller remote: a key-less /v1 refuses it, management (allow-remote: false) refuses it, and the log says so', async () => {
    const forwarded = await send(open.port, 'GET', '/v1/models', { 'x-forwarded-for': '203.0.113.7' });
    assert.equal(forwarded.status, 403, forwarded.text);
    assert.equal((await send(open.port, 'GET', '/v1/models', { 'x-real-ip': '203.0.113.7' })).status, 403);
    const management = await send(open.port, 'GET', '/v0/management/config', {
      'x-management-key': SECRET,
      forwarded: 'for=203.0.113.7;proto=https',
    });
    assert.equal(management.status, 403, management.text);
    assert.match(management.text, /allow-remote/);
    assert.ok(
      open.lines.some((line) => /forwarded_headers_from_untrusted_peer/.test(line) && /"level":"warn"/.test(line)),
      'a warning names the untrusted forwarding peer',
    );
    // Without the headers the same caller is local again.
    assert.equal((await send(open.port, 'GET', '/v0/management/config', { 'x-management-key': SECRET })).status, 200);
    // A keyed caller is judged on its key.
    assert.equal(
      (await send(keyed.port, 'GET', '/v1/models', { authorization: 'Bearer sk-client', 'x-forwarded-for': '203.0.113.7' })).status,
      200,
    );
  });
});

describe('management lockout', () => {
  test('six cross-site wrong-key logins are refused by Origin, and the real key still works', async () => {
    for (let i = 0; i < 6; i++) {
      const answer = await send(open.port, 'POST', '/dashboard/login', { ...form, origin: EVIL }, 'key=wrong');
      assert.equal(answer.status, 403, `attempt ${i + 1}: ${answer.text}`);
    }
    // A navigation that sent no Origin still says where it came from.
    const noOrigin = await send(open.port, 'POST', '/dashboard/login', { ...form, 'sec-fetch-site': 'cross-site' }, 'key=wrong');
    assert.equal(noOrigin.status, 403);
    // A page with no-referrer posts with `Origin: null`; only the gateway's own page is same-origin.
    const opaque = await send(
      open.port,
      'POST',
      '/dashboard/login',
      { ...form, origin: 'null', 'sec-fetch-site': 'cross-site' },
      'key=wrong',
    );
    assert.equal(opaque.status, 403);
    assert.equal((await send(open.port, 'GET', '/v0/management/config', { 'x-management-key': SECRET })).status, 200);
    const login = await send(
      open.port,
      'POST',
      '/dashboard/login',
      { ...form, origin: `http://127.0.0.1:${open.port}` },
      `key=${encodeURIComponent(SECRET)}`,
    );
    assert.equal(login.status, 303, login.text);
  });

  test('a valid key is never locked out: while wrong and missing keys wait out the lockout, the real key and its session are served', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await send(open.port, 'GET', '/v0/management/config', { 'x-management-key': `wrong-${i}` })).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429]);
    assert.equal((await send(open.port, 'GET', '/v0/management/config', { 'x-management-key': 'wrong-again' })).status, 429);
    assert.equal((await send(open.port, 'GET', '/v0/management/config')).status, 429, 'a missing key waits too');
    assert.equal((await send(open.port, 'GET', '/v0/management/config', { 'x-management-key': SECRET })).status, 200);
    const login = await send(open.port, 'POST', '/dashboard/login', form, `key=${encodeURIComponent(SECRET)}`);
    assert.equal(login.status, 303, login.text);
    // The session it opened is not locked out either.
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    assert.equal((await send(open.port, 'GET', '/v0/operations/providers/status', { cookie })).status, 200);
  });

  test('cookie-authorized changes check Origin: a session cookie sent from another origin changes nothing', async () => {
    const login = await send(proxied.port, 'POST', '/dashboard/login', form, 'key=short-management-key');
    assert.equal(login.status, 303);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const path = '/v0/management/quota-exceeded/switch-project';
    const crossSite = await send(proxied.port, 'PUT', path, { cookie, ...json, origin: 'http://localhost:5173' }, '{"value":false}');
    assert.equal(crossSite.status, 403, crossSite.text);
    const fetchSite = await send(proxied.port, 'PUT', path, { cookie, ...json, 'sec-fetch-site': 'cross-site' }, '{"value":false}');
    assert.equal(fetchSite.status, 403, fetchSite.text);
    const opaque = await send(
      proxied.port,
      'PUT',
      path,
      { cookie, ...json, origin: 'null', 'sec-fetch-site': 'same-site' },
      '{"value":false}',
    );
    assert.equal(opaque.status, 403, opaque.text);
    const plainText = await send(proxied.port, 'PUT', path, { cookie, 'content-type': 'text/plain' }, '{"value":false}');
    assert.equal(plainText.status, 415, plainText.text);
    assert.equal(proxied.gateway.config()['quota-exceeded']['switch-project'], true);
    const sameOrigin = await send(
      proxied.port,
      'PUT',
      path,
      { cookie, ...json, origin: `http://127.0.0.1:${proxied.port}` },
      '{"value":false}',
    );
    assert.equal(sameOrigin.status, 200, sameOrigin.text);
    assert.equal(proxied.gateway.config()['quota-exceeded']['switch-project'], false);
    // The gateway's own no-referrer page may send `Origin: null`; the browser's Sec-Fetch-Site vouches for it.
    const ownPage = await send(
      proxied.port,
      'PUT',
      path,
      { cookie, ...json, origin: 'null', 'sec-fetch-site': 'same-origin' },
      '{"value":true}',
    );
    assert.equal(ownPage.status, 200, ownPage.text);
  });

  test('IPv6 failures are bucketed by /64: rotating addresses inside one /64 does not reset the count', async () => {
    const wrong = (address: string) =>
      send(proxied.port, 'GET', '/v0/management/config', { 'x-management-key': 'guess', 'x-forwarded-for': address });
    for (let i = 1; i <= 5; i++) assert.equal((await wrong(`2001:db8:1:2::${i.toString(16)}`)).status, 401);
    assert.equal((await wrong('2001:db8:1:2:ffff:ffff:ffff:fffe')).status, 429, 'the same /64');
    assert.equal((await wrong('2001:db8:1:3::1')).status, 401, 'another /64');
    // IPv4 callers keep their own buckets.
    assert.equal((await wrong('198.51.100.20')).status, 401);
  });

  test('a global cap on the failure rate stops a guesser spread over many addresses, never a valid key', () => {
    let now = 0;
    const guard = managementAuth({
      secretKey: () => SECRET,
      allowRemote: () => true,
      trustedProxies: () => [],
      clock: { now: () => now },
      maxGlobalFailures: 20,
      globalWindowMs: 60_000,
    });
    for (let i = 0; i < 20; i++) assert.equal(guard.checkKey(`198.51.100.${i}`, 'guess'), 'wrong');
    assert.equal(guard.checkKey('203.0.113.200', 'guess'), 'locked', 'the 21st failure within the minute, from a fresh address');
    assert.equal(guard.checkKey('203.0.113.201', SECRET), 'ok');
    now += 60_001;
    assert.equal(guard.checkKey('203.0.113.202', 'guess'), 'wrong', 'the window has passed');
  });

  test('a secret-key under 32 characters is warned of at start; a long one is not', () => {
    assert.ok(proxied.lines.some((line) => /management_secret_key_short/.test(line) && /"level":"warn"/.test(line)));
    assert.ok(!open.lines.some((line) => /management_secret_key_short/.test(line)));
  });

  test('the session cookie is Secure when a trusted proxy says the request came over TLS', async () => {
    const overTls = await send(
      proxied.port,
      'POST',
      '/dashboard/login',
      { ...form, 'x-forwarded-proto': 'https' },
      'key=short-management-key',
    );
    assert.equal(overTls.status, 303);
    assert.match(String(overTls.headers['set-cookie']), /; Secure/);
    const plain = await send(proxied.port, 'POST', '/dashboard/login', form, 'key=short-management-key');
    assert.doesNotMatch(String(plain.headers['set-cookie']), /Secure/);
    // An untrusted peer's claim is not believed.
    const claimed = await send(open.port, 'POST', '/dashboard/login', { ...form, 'x-forwarded-proto': 'https' }, `key=${SECRET}`);
    assert.equal(claimed.status, 303);
    assert.doesNotMatch(String(claimed.headers['set-cookie']), /Secure/);
  });
});

describe('a reload that would open a public bind', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const publicConfig = (keys: string) =>
    `host: 0.0.0.0\nport: 0\napi-keys: ${keys}\nremote-management: { secret-key: ${SECRET} }\n${PROVIDERS}`;
  async function publicGateway(options: { insecure?: boolean } = {}) {
    const dir = await mkdtemp(join(tmpdir(), 'gateway-security-'));
    dirs.push(dir);
    const configPath = join(dir, 'config.yaml');
    const text = publicConfig('[sk-public]');
    await writeFile(configPath, text);
    return { ...(await startGateway(text, { configPath, ...options })), configPath, text };
  }

  test('PUT config.yaml emptying api-keys on 0.0.0.0 is 422 naming api-keys; the config and file stay', async () => {
    const { gateway, port, configPath, text } = await publicGateway();
    const answer = await send(
      port,
      'PUT',
      '/v0/management/config.yaml',
      { 'x-management-key': SECRET, 'content-type': 'application/yaml' },
      publicConfig('[]'),
    );
    assert.equal(answer.status, 422, answer.text);
    const { error } = JSON.parse(answer.text) as { error: { code: string; message: string; details: unknown } };
    assert.equal(error.code, 'validation_failed');
    assert.match(JSON.stringify(error.details), /api-keys/);
    assert.deepEqual(gateway.config()['api-keys'], ['sk-public']);
    assert.equal(await readFile(configPath, 'utf8'), text);
    assert.equal((await send(port, 'GET', '/v1/models')).status, 401, '/v1 still needs a key');
  });

  test('a file edit emptying api-keys is refused and logged; the running config keeps its keys', async () => {
    const { gateway, lines, port, configPath } = await publicGateway();
    await writeFile(configPath, publicConfig('[]'));
    await eventually('the reload to be refused', () => lines.some((line) => /config_reload_rejected/.test(line) && /api-keys/.test(line)));
    assert.deepEqual(gateway.config()['api-keys'], ['sk-public']);
    assert.equal((await send(port, 'GET', '/v1/models')).status, 401);
  });

  test('--insecure at start keeps allowing it', async () => {
    const { gateway, port } = await publicGateway({ insecure: true });
    const answer = await send(
      port,
      'PUT',
      '/v0/management/config.yaml',
      { 'x-management-key': SECRET, 'content-type': 'application/yaml' },
      publicConfig('[]'),
    );
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(gateway.config()['api-keys'], []);
  });
});

describe('the bind rule at start, with config keys or runtime client keys', () => {
  test('a public bind with neither is refused at start, saying how to set a key; a loopback one warns, a keyed one does not', async () => {
    await assert.rejects(
      Gateway.start({ config: parseConfig(`host: 0.0.0.0\nport: 0\n${PROVIDERS}`), logDestination: { write() {} } }),
      (error: unknown) =>
        error instanceof UnsafeBindError &&
        /api-keys/.test(error.message) &&
        /switchyard keys create/.test(error.message) &&
        /--insecure/.test(error.message),
    );
    assert.ok(open.lines.some((line) => /gateway_without_api_keys/.test(line) && /"level":"warn"/.test(line)));
    assert.ok(!keyed.lines.some((line) => /gateway_without_api_keys/.test(line)));
  });

  test('with only a runtime client key, a public bind starts without --insecure, /v1 wants the key, and a reload keeps it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gateway-runtime-keys-'));
    after(() => rm(dir, { recursive: true, force: true }));
    const configPath = join(dir, 'config.yaml');
    const configFor = (host: string) => `host: ${host}\nport: 0\nremote-management: { secret-key: ${SECRET} }\n${PROVIDERS}`;
    // The operator creates the key on a loopback start, as switchyard keys create does.
    await writeFile(configPath, configFor('127.0.0.1'));
    const local = await Gateway.start({ config: parseConfig(configFor('127.0.0.1')), configPath, logDestination: { write() {} } });
    let secret: string;
    try {
      const created = await send(
        Number(new URL(local.url).port),
        'POST',
        '/v0/management/client-keys',
        { 'x-management-key': SECRET, ...json },
        JSON.stringify({ name: 'ci' }),
      );
      assert.equal(created.status, 201, created.text);
      secret = (JSON.parse(created.text) as { secret: string }).secret;
    } finally {
      await local.close();
    }
    await writeFile(configPath, configFor('0.0.0.0'));
    const { port, lines } = await startGateway(configFor('0.0.0.0'), { configPath });
    assert.equal((await send(port, 'GET', '/v1/models')).status, 401, 'no key-less caller');
    assert.equal((await send(port, 'GET', '/v1/models', { authorization: `Bearer ${secret}` })).status, 200);
    assert.ok(!lines.some((line) => /gateway_without_api_keys/.test(line)), 'a keyed gateway is not warned of');
    const reload = await send(
      port,
      'PUT',
      '/v0/management/config.yaml',
      { 'x-management-key': SECRET, 'content-type': 'application/yaml' },
      `${configFor('0.0.0.0')}logging: { level: debug }\n`,
    );
    assert.equal(reload.status, 200, reload.text);
  });
});

test('a log follower that never reads holds a bounded queue: the oldest lines are dropped, and the stream says how many', async () => {
  const socket = connect(proxied.port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  after(() => socket.destroy());
  socket.write(
    `GET /v0/management/logs?follow=true&lines=1 HTTP/1.1\r\nHost: 127.0.0.1:${proxied.port}\r\nX-Management-Key: short-management-key\r\n\r\n`,
  );
  await eventually('the follower to attach', () => proxied.gateway.logTail.followerCount > 0);
  socket.pause();
  // One synchronous burst: the route cannot send a line before it ends, so everything past the bound waits in the queue.
  const burst = LOG_FOLLOW_QUEUE * 3;
  for (let i = 0; i < burst; i++) proxied.gateway.observability.logger.info({ i }, 'burst_line');
  socket.resume();
  await eventually('the last line of the burst to arrive', () => text.includes(`"i":${burst - 1},`));
  assert.match(text, /event: dropped\ndata: \{"dropped":\d+/);
  const sent = (text.match(/burst_line/g) ?? []).length;
  assert.ok(sent <= LOG_FOLLOW_QUEUE, `at most the queue's worth of lines was kept (${sent} of ${burst})`);
});
