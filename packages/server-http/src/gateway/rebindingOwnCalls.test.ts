import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AlertNotification } from '@switchyard/observability';
import { stagedLookup, startTcpProxy } from '@switchyard/test-support';
import { managedConfig } from '../../test/rebindingFixture.js';
import { parseConfig } from './config/load.js';
import { Gateway } from './gateway.js';

// DNS rebinding, for the calls the gateway makes on its own rather than for a client: alert notifications
// (chat, pager, e-mail), trace exports, OAuth refreshes and quota snapshots. A PUT through the management
// API sets each destination on a name that resolves to a public address; after the restart that applies
// them (they are read at start) the names resolve to 127.0.0.1, and every one of those calls must be
// refused before a connection is opened. Only loopback is ever contacted; DNS is staged.

const dir = await mkdtemp(join(tmpdir(), 'rebinding-own-calls-'));
after(() => rm(dir, { recursive: true, force: true }));

const KEY = 'mgmt-secret';
const PUBLIC = '93.184.216.34';
const HOSTS = {
  chat: 'hooks.rebind.test',
  pager: 'pager.rebind.test',
  mail: 'mail.rebind.test',
  traces: 'traces.rebind.test',
  auth: 'auth.rebind.test',
  quota: 'quota.rebind.test',
};

/** A stand-in for every HTTP destination: records what reached it, and answers each in its own dialect. */
async function startDestinations() {
  const paths: string[] = [];
  const answers: Record<string, [number, unknown]> = {
    'POST /hook': [200, 'ok'],
    'POST /v2/enqueue': [202, { status: 'success' }],
    'POST /v1/traces': [200, {}],
    'POST /token': [200, { access_token: 'at-refreshed', refresh_token: 'rt-refreshed', expires_in: 3600, token_type: 'bearer' }],
    'GET /quota': [200, { limit: 300, used: 20, remaining: 280, resets_at: '2030-01-01T00:00:00Z' }],
  };
  const server = createServer((req, res) => {
    req.resume().once('end', () => {
      const path = (req.url ?? '').split('?', 1)[0]!;
      paths.push(path);
      const [status, body] = answers[`${req.method} ${path}`] ?? [404, 'not found'];
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, paths };
}

const firing: AlertNotification = {
  kind: 'alert',
  status: 'firing',
  rule: 'provider_down',
  severity: 'critical',
  provider: 'local',
  condition: 'provider_health == unhealthy',
  summary: 'provider_health == unhealthy for local',
  values: { 'provider_health == unhealthy': 'unhealthy' },
  activeSince: 0,
  firedAt: 0,
  resolvedAt: null,
  dedupKey: 'switchyard:provider_down:local',
};

describe('DNS rebinding: the gateway’s own calls to hosts the API set are checked at every connection', async () => {
  let hostAddress = PUBLIC;
  const dns = stagedLookup((hostname) =>
    Object.values(HOSTS).includes(hostname) ? hostAddress : new Error(`getaddrinfo ENOTFOUND ${hostname}`),
  );
  const destinations = await startDestinations();
  // Each proxy counts the connections that reach 127.0.0.1: "refused" means none did.
  const web = await startTcpProxy({ host: '127.0.0.1', port: destinations.port });
  // Nothing listens behind this one: an SMTP connection reaching it is counted, then dropped.
  const mail = await startTcpProxy({ host: '127.0.0.1', port: 9 });
  const gateways: Gateway[] = [];
  after(async () => {
    for (const gateway of gateways) await gateway.close();
    await web.close();
    await mail.close();
  });
  const at = (host: string, path = '') => `http://${host}:${web.port}${path}`;

  const base = (allow = '[]', providers = '', rest = '') => `${managedConfig(KEY, allow, providers)}${rest}`;
  // Every destination the gateway calls on its own, each on a name of its own.
  const full = (allow = '[]') =>
    base(
      allow,
      `  acme:
    kind: mock
    models: [acme-model]
    health_check: { enabled: false }
    oauth: { device_authorization_url: '${at(HOSTS.auth, '/device')}', token_url: '${at(HOSTS.auth, '/token')}', client_id: switchyard }
  assistant:
    kind: code-assistant
    models: [assistant-model]
    health_check: { enabled: false }
    options: { quota_url: '${at(HOSTS.quota, '/quota')}' }
`,
      `notifications:
  retry: { max_attempts: 1 }
  chat: { enabled: true, webhook_url: '${at(HOSTS.chat, '/hook')}' }
  pager: { enabled: true, service_key: R0UTING, url: '${at(HOSTS.pager)}' }
  email: { enabled: true, smtp_server: '${HOSTS.mail}:${mail.port}', from: gw@example.test, to: [oncall@example.test] }
tracing: { enabled: true, exporter: otlp, endpoint: '${at(HOSTS.traces, '/v1/traces')}', sample_rate: 1 }
`,
    );

  const start = async (path: string) => {
    const gateway = await Gateway.start({
      config: parseConfig(await readFile(path, 'utf8')),
      configPath: path,
      logDestination: { write() {} },
      resolve: dns.lookup,
    });
    gateways.push(gateway);
    return gateway;
  };
  /** Adds an OAuth credential of `acme` (refreshed through its token_url) and an API key of `assistant` (quota snapshots). */
  const addCredentials = async (gateway: Gateway) => {
    const { manager } = gateway.credentials;
    const oauth = { flow: 'acme', params: {}, secrets: {} };
    await manager.add({ id: 'acme-oauth', provider: 'acme', type: 'oauth', token: 'at-1', refresh_token: 'rt-1', oauth });
    await manager.add({ id: 'assistant-key', provider: 'assistant', type: 'api_key', token: 'tok-assistant' });
  };
  const notify = async (gateway: Gateway) => {
    const { dispatcher } = gateway.observability;
    const before = dispatcher.recent().length;
    dispatcher.dispatch(firing, ['chat', 'pager', 'email']);
    await dispatcher.idle();
    return Object.fromEntries(
      dispatcher
        .recent()
        .slice(before)
        .map((record) => [record.channel, record]),
    );
  };
  const quotaSnapshot = async (gateway: Gateway) => {
    const response = await fetch(`${gateway.url}/v0/management/provider-a-quota`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(response.status, 200);
    const { snapshots } = (await response.json()) as { snapshots: { source: string; limit: number | null; error?: string }[] };
    assert.equal(snapshots.length, 1);
    return snapshots[0]!;
  };
  /** A request through the gateway, so that it has a trace to export. */
  const chat = async (gateway: Gateway) => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-model', messages: [{ role: 'user', content: 'hello' }] }),
    });
    assert.equal(response.status, 200, await response.clone().text());
  };

  const configPath = join(await mkdtemp(join(dir, 'api-')), 'config.yaml');
  await writeFile(configPath, base());

  test('a PUT sets every destination on a public name: each host is guarded from then on', async () => {
    const gateway = await start(configPath);
    const put = await fetch(`${gateway.url}/v0/management/config.yaml`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/yaml' },
      body: full(),
    });
    assert.equal(put.status, 200, await put.clone().text());
    assert.deepEqual(gateway.guardedHosts.list(), Object.values(HOSTS).sort());
    await gateway.close();
  });

  // Suites build when declared; each one's gateway starts in `before`, once the tests ahead of it have run.
  describe('after the restart that applies them, with the names resolving to 127.0.0.1', () => {
    let gateway: Gateway;
    before(async () => {
      hostAddress = '127.0.0.1';
      gateway = await start(configPath);
      await addCredentials(gateway);
    });

    test('alert notifications (chat, pager, e-mail) are refused before connecting', async () => {
      const [webBefore, mailBefore] = [web.accepted, mail.accepted];
      const records = await notify(gateway);
      for (const channel of ['chat', 'pager', 'email']) {
        assert.equal(records[channel]?.outcome, 'failed', channel);
        assert.match(String(records[channel]?.error), /SSRF_BLOCKED/, channel);
      }
      assert.equal(web.accepted, webBefore, 'no webhook or pager connection');
      assert.equal(mail.accepted, mailBefore, 'no SMTP connection');
    });

    test('an OAuth refresh is refused before connecting', async () => {
      const before = web.accepted;
      await assert.rejects(gateway.credentials.manager.refresh('acme-oauth'), /token failed: SSRF_BLOCKED/);
      assert.equal(web.accepted, before);
    });

    test('a quota snapshot is refused (the local figures stand in)', async () => {
      const before = web.accepted;
      const snapshot = await quotaSnapshot(gateway);
      assert.equal(snapshot.source, 'local');
      assert.match(String(snapshot.error), new RegExp(`${HOSTS.quota} is in the loopback range`));
      assert.equal(web.accepted, before);
    });

    test('the trace export (on close) is refused', async () => {
      await chat(gateway);
      const [before, asked] = [web.accepted, dns.asked.length];
      await gateway.close();
      assert.equal(web.accepted, before);
      assert.ok(dns.asked.slice(asked).includes(HOSTS.traces), 'an export was attempted, through the gateway’s resolver');
      assert.ok(!destinations.paths.includes('/v1/traces'));
    });
  });

  describe('once the operator names the hosts in api-call-allow', () => {
    let gateway: Gateway;
    before(async () => {
      await writeFile(configPath, full(`[${Object.values(HOSTS).join(', ')}]`));
      gateway = await start(configPath);
    });

    test('the hosts are still guarded, and every call connects', async () => {
      assert.deepEqual(gateway.guardedHosts.list(), Object.values(HOSTS).sort());
      const mailBefore = mail.accepted;
      const records = await notify(gateway);
      assert.equal(records.chat?.outcome, 'delivered');
      assert.equal(records.pager?.outcome, 'delivered');
      assert.equal(mail.accepted, mailBefore + 1, 'the SMTP connection reached 127.0.0.1');
      const refreshed = await gateway.credentials.manager.refresh('acme-oauth');
      assert.equal(refreshed.status, 'active');
      assert.equal((await quotaSnapshot(gateway)).source, 'provider');
      await chat(gateway);
      await gateway.close();
      for (const path of ['/hook', '/v2/enqueue', '/token', '/quota', '/v1/traces']) assert.ok(destinations.paths.includes(path), path);
    });
  });

  describe('the same destinations written by the operator in the file', () => {
    let operatorPath: string;
    let gateway: Gateway;
    before(async () => {
      operatorPath = join(await mkdtemp(join(dir, 'operator-')), 'config.yaml');
      await writeFile(operatorPath, full());
      gateway = await start(operatorPath);
      await addCredentials(gateway);
    });

    test('are not guarded: notifications, refreshes and trace exports connect to 127.0.0.1', async () => {
      assert.deepEqual(gateway.guardedHosts.list(), []);
      const [webBefore, mailBefore] = [web.accepted, mail.accepted];
      const records = await notify(gateway);
      assert.equal(records.chat?.outcome, 'delivered');
      assert.equal(records.pager?.outcome, 'delivered');
      assert.equal(mail.accepted, mailBefore + 1);
      assert.equal((await gateway.credentials.manager.refresh('acme-oauth')).status, 'active');
      const traced = destinations.paths.filter((path) => path === '/v1/traces').length;
      await chat(gateway);
      await gateway.close();
      assert.equal(destinations.paths.filter((path) => path === '/v1/traces').length, traced + 1);
      assert.ok(web.accepted > webBefore);
    });

    test('quota_url alone stays checked at every call, wherever it came from (as before)', async () => {
      const operator = await start(operatorPath);
      const snapshot = await quotaSnapshot(operator);
      assert.equal(snapshot.source, 'local');
      assert.match(String(snapshot.error), /loopback/);
    });
  });
});
