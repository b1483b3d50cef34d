import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { parseConfig } from './config/load.js';
import { Gateway } from './gateway.js';
import { parseQuotaAnswer } from './quotaSnapshot.js';

const dir = await mkdtemp(join(tmpdir(), 'provider-quota-'));
const gateways: Gateway[] = [];
after(async () => {
  for (const gateway of gateways) await gateway.close();
  await rm(dir, { recursive: true, force: true });
});

const KEY = 'mgmt-quota-snap';

test('parseQuotaAnswer reads the generic shape and a coding assistant’s quota_snapshots', () => {
  assert.deepEqual(parseQuotaAnswer({ limit: 300, used: 12, resets_at: '2030-01-01T00:00:00Z' }), {
    limit: 300,
    used: 12,
    remaining: 288,
    resets_at: '2030-01-01T00:00:00Z',
  });
  assert.deepEqual(
    parseQuotaAnswer({
      quota_reset_date: '2030-02-01',
      quota_snapshots: { chat: { unlimited: true }, premium_interactions: { entitlement: 300, remaining: 250, unlimited: false } },
    }),
    { limit: 300, used: 50, remaining: 250, resets_at: '2030-02-01' },
  );
  assert.deepEqual(parseQuotaAnswer({ quota_snapshots: { chat: { unlimited: true } } }), {
    limit: null,
    used: null,
    remaining: null,
    resets_at: null,
  });
  assert.equal(parseQuotaAnswer({ hello: 'world' }), undefined);
  assert.equal(parseQuotaAnswer([1, 2]), undefined);
});

test('/v0/management/provider-a-quota: provider figures through the SSRF guard, local ones otherwise, 400/404 naming auth_index', async () => {
  const seen: IncomingHttpHeaders[] = [];
  const quotaEndpoint = createServer((req, res) => {
    seen.push(req.headers);
    if (req.headers.authorization === 'Bearer tok-redirect') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        quota_reset_date: '2030-02-01',
        quota_snapshots: { premium_interactions: { entitlement: 300, remaining: 280, unlimited: false } },
      }),
    );
  });
  await new Promise<void>((resolve) => quotaEndpoint.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => quotaEndpoint.close(() => resolve())));
  const quotaUrl = `http://127.0.0.1:${(quotaEndpoint.address() as AddressInfo).port}/copilot_internal/user`;
  const authDir = await mkdtemp(join(tmpdir(), 'provider-quota-auths-'));
  after(() => rm(authDir, { recursive: true, force: true }));
  const yaml = (allow: string) => `
port: 0
auth-dir: ${authDir}
remote-management:
  secret-key: ${KEY}
  api-call-allow: ${allow}
providers:
  assistant:
    kind: code-assistant
    models: [gpt-4.1]
    health_check: { enabled: false }
    options: { quota_url: "${quotaUrl}" }
  assistant-local:
    kind: code-assistant
    models: [gpt-4.1-mini]
    health_check: { enabled: false }
  demo:
    kind: mock
    models: [demo-model]
metrics: { enabled: false }
`;
  const path = join(dir, 'provider-quota.yaml');
  await writeFile(path, yaml('[]'));
  const gateway = await Gateway.start({ config: parseConfig(yaml('[]')), configPath: path, logDestination: { write() {} } });
  gateways.push(gateway);
  const { manager } = gateway.credentials;
  // Listing order (by file name): 0 a-assist, 1 b-local, 2 c-demo, 3 d-redirect.
  await manager.add({ id: 'a-assist', provider: 'assistant', type: 'api_key', token: 'tok-assist-secret' });
  await manager.add({ id: 'b-local', provider: 'assistant-local', type: 'api_key', token: 'tok-local', quota: { limit: 500 } });
  await manager.add({ id: 'c-demo', provider: 'demo', type: 'api_key', token: 'tok-demo' });
  await manager.add({ id: 'd-redirect', provider: 'assistant', type: 'api_key', token: 'tok-redirect' });
  const get = (query: string, key: string | null = KEY) =>
    fetch(`${gateway.url}/v0/management/provider-a-quota${query}`, key === null ? {} : { headers: { authorization: `Bearer ${key}` } });
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are probed field by field
  const body = async (response: Response) => (await response.json()) as any;

  // Loopback is not allow-listed yet: refused before any connection; the local figures stand in, with the reason.
  const refused = await body(await get('?auth_index=0'));
  assert.equal(refused.snapshots.length, 1);
  assert.equal(refused.snapshots[0].source, 'local');
  assert.match(refused.snapshots[0].error, /quota_url refused: .*loopback.*api-call-allow/);
  assert.equal(seen.length, 0, 'the endpoint was never called');

  await writeFile(path, yaml('[127.0.0.1]'));
  await eventually('the allow-list edit to apply', () => gateway.config()['remote-management']['api-call-allow'].length > 0);

  const one = await get('?auth_index=0');
  assert.equal(one.status, 200);
  const text = await one.text();
  assert.doesNotMatch(text, /tok-assist-secret/, 'the token never appears in the answer');
  const snapshot = JSON.parse(text).snapshots[0];
  assert.deepEqual(
    { ...snapshot, fetched_at: undefined },
    {
      auth_index: 0,
      id: 'a-assist',
      provider: 'assistant',
      source: 'provider',
      limit: 300,
      used: 20,
      remaining: 280,
      resets_at: '2030-02-01',
      fetched_at: undefined,
    },
  );
  assert.ok(!Number.isNaN(Date.parse(snapshot.fetched_at)));
  assert.equal(seen.at(-1)?.authorization, 'Bearer tok-assist-secret');

  // Without auth_index: every code-assistant credential; the one without quota_url from the local tracker.
  const all = await body(await get(''));
  assert.deepEqual(
    all.snapshots.map((s: { auth_index: number; source: string; limit: number | null }) => [s.auth_index, s.source, s.limit]),
    [
      [0, 'provider', 300],
      [1, 'local', 500],
      [3, 'local', null],
    ],
  );
  // A redirect is not followed (it could lead past the SSRF check): the local figures, with the reason.
  assert.match(all.snapshots[2].error, /redirected \(302\); redirects are not followed/);

  for (const [query, status] of [
    ['?auth_index=2', 404], // a mock credential, not a code assistant's
    ['?auth_index=9', 404],
    ['?auth_index=abc', 400],
    ['?auth_index=-1', 400],
    ['?auth_index=', 400],
  ] as const) {
    const answer = await get(query);
    assert.equal(answer.status, status, query);
    const error = (await body(answer)).error;
    if (status === 400) assert.match(JSON.stringify(error), /auth_index/, `${query} names the field`);
  }
  assert.equal((await get('?auth_index=0', null)).status, 401);
  const doc = await body(await fetch(`${gateway.url}/openapi.json`));
  assert.ok(doc.paths['/v0/management/provider-a-quota']?.get, 'described in /openapi.json');
});

test('config: a quota_url that is not an http(s) URL is refused at load, naming the field', () => {
  assert.throws(
    () => parseConfig('providers:\n  a:\n    kind: code-assistant\n    options: { quota_url: "file:///etc/passwd" }\n'),
    /providers\.a\.options\.quota_url/,
  );
});
