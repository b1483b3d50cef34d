import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { eventually, stagedLookup, startFakeOpenAi, startTcpProxy } from '@switchyard/test-support';
import { acmeOn, assertRefusedUpstream, chatAcme, managedConfig } from '../../test/rebindingFixture.js';
import type { LookupFunction } from '../controlPlane/ssrf.js';
import { parseConfig } from './config/load.js';
import { Gateway, GUARDED_HOSTS_FILE } from './gateway.js';
import { GuardedHostsUnreadableError } from './guardedHostStore.js';

// PUT /v0/management/config.yaml may not aim the gateway at its own network: every outbound URL the new
// config adds or changes goes through the SSRF guard, when submitted and (for names, which can rebind) at
// every connection. Only loopback is ever contacted (mock providers, a fake upstream); DNS is staged.

const dir = await mkdtemp(join(tmpdir(), 'config-ssrf-'));
const gateways: Gateway[] = [];
after(async () => {
  for (const gateway of gateways) await gateway.close();
  await rm(dir, { recursive: true, force: true });
});

const KEY = 'mgmt-secret';
const config = (allow: string, extra = '') => managedConfig(KEY, allow, extra);

/** A gateway on `text`, written to `name` in a directory of its own (so each has its own `auth-dir`). */
async function start(text: string, name: string, resolve?: LookupFunction) {
  const path = join(await mkdtemp(join(dir, 'gateway-')), name);
  await writeFile(path, text);
  const gateway = await Gateway.start({
    config: parseConfig(text),
    configPath: path,
    logDestination: { write() {} },
    ...(resolve ? { resolve } : {}),
  });
  gateways.push(gateway);
  const put = (body: string) =>
    fetch(`${gateway.url}/v0/management/config.yaml`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/yaml' },
      body,
    });
  return { gateway, path, put };
}

const chat = (gateway: Gateway) => chatAcme(gateway.url);
// A refused connection must not cool the provider down for the next test.
const withProviders = (allow: string, providers = '') =>
  `${config(allow, providers)}server:\n  operations:\n    cooldown: { enabled: false }\n`;

// biome-ignore lint/suspicious/noExplicitAny: error bodies are probed field by field
const json = async (response: Response) => (await response.json()) as Record<string, any>;

/** Asserts a 403 `forbidden` naming exactly `fields`, and returns its details. */
async function assertRefused(response: Response, fields: string[]) {
  assert.equal(response.status, 403, await response.clone().text());
  const { error } = await json(response);
  assert.equal(error.code, 'forbidden');
  assert.deepEqual(error.details.map((d: { field: string }) => d.field).sort(), [...fields].sort());
  return error.details as { field: string; message: string; range?: string }[];
}

describe('PUT /config.yaml: outbound URLs it adds or changes pass the SSRF guard', async () => {
  const running = config('[]');
  const { gateway, path, put } = await start(running, 'guarded.yaml');

  test('a provider aimed at the metadata address is refused, nothing written or applied', async () => {
    const next = config('[]', '  acme:\n    kind: mock\n    base_url: http://169.254.169.254/\n    models: [acme-model]\n');
    const details = await assertRefused(await put(next), ['providers.acme.base_url']);
    assert.equal(details[0]!.range, 'metadata');
    assert.match(details[0]!.message, /api-call-allow/);
    assert.equal(await readFile(path, 'utf8'), running, 'the file is unchanged');
    assert.equal(gateway.config().providers.acme, undefined, 'the running config is unchanged');
  });

  test('a loopback failover backup_url is refused', async () => {
    const next = `${config('[]')}server:\n  failover:\n    mode: active_passive\n    backup_url: http://127.0.0.1:9/\n`;
    const details = await assertRefused(await put(next), ['server.failover.backup_url']);
    assert.equal(details[0]!.range, 'loopback');
    assert.equal(await readFile(path, 'utf8'), running);
    assert.equal(gateway.config().server.failover.mode, 'none');
  });

  test('a hostname that resolves to loopback is refused like the address itself', async () => {
    const next = config('[]', '  acme:\n    kind: mock\n    base_url: http://localhost:8080/v1\n    models: [acme-model]\n');
    const details = await assertRefused(await put(next), ['providers.acme.base_url']);
    assert.equal(details[0]!.range, 'loopback');
  });

  test('every refused field is named at once: peers, webhooks, oauth endpoints, quota_url', async () => {
    const next = `${config(
      '[]',
      `  acme:
    kind: mock
    models: [acme-model]
    options: { quota_url: 'http://10.0.0.8/quota' }
    oauth: { device_authorization_url: 'http://[::1]/device', token_url: 'http://192.168.1.1/token', client_id: acme }
`,
    )}server:
  failover:
    peers: ['http://172.16.0.5:8317']
notifications:
  chat: { webhook_url: 'http://169.254.169.254/hook' }
`;
    await assertRefused(await put(next), [
      'providers.acme.options.quota_url',
      'providers.acme.oauth.device_authorization_url',
      'providers.acme.oauth.token_url',
      'server.failover.peers.0',
      'notifications.chat.webhook_url',
    ]);
    assert.equal(await readFile(path, 'utf8'), running);
  });

  test('the allow-list cannot be widened through the API (it would open the next change)', async () => {
    await assertRefused(await put(config('[169.254.169.254]')), ['remote-management.api-call-allow']);
    assert.deepEqual(gateway.config()['remote-management']['api-call-allow'], []);
  });

  test('an unchanged loopback base_url from the file passes when another field changes', async () => {
    const next = running.replace('models: [local-model]', 'models: [local-model, other-model]');
    const ok = await put(next);
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(await readFile(path, 'utf8'), next);
    assert.deepEqual(gateway.config().providers.local!.models, ['local-model', 'other-model']);
  });
});

describe('PUT /config.yaml: hosts named in api-call-allow may be set', async () => {
  const { gateway, path, put } = await start(config('[localhost, 127.0.0.1]'), 'allowed.yaml');

  test('a changed URL to an allowed host is accepted and applied', async () => {
    const next = config(
      '[localhost, 127.0.0.1]',
      '  acme:\n    kind: mock\n    base_url: http://localhost:8080/v1\n    models: [acme-model]\n',
    ).replace('base_url: http://127.0.0.1:11434', 'base_url: http://127.0.0.1:11435');
    const ok = await put(next);
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(await readFile(path, 'utf8'), next);
    assert.equal(gateway.config().providers.acme!.base_url, 'http://localhost:8080/v1');
    assert.equal(gateway.config().providers.local!.base_url, 'http://127.0.0.1:11435');
  });

  test('an allowed host still may not carry credentials in its URL', async () => {
    const next = config('[localhost, 127.0.0.1]').replace('http://127.0.0.1:11434', 'http://user:pw@127.0.0.1:11434');
    const details = await assertRefused(await put(next), ['providers.local.base_url']);
    assert.match(details[0]!.message, /credentials/);
  });
});

describe('DNS rebinding: a name set through the API is checked again at every connection', async () => {
  const HOST = 'models.rebind.test';
  // What HOST resolves to now: a public address when the config is submitted (staged DNS: never contacted, the
  // test's connections all go to the loopback proxy), 127.0.0.1 once it "rebinds".
  let hostAddress = '93.184.216.34';
  const dns = stagedLookup((hostname) =>
    hostname === HOST ? hostAddress : Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
  );
  const upstream = await startFakeOpenAi();
  // Counts every connection that reaches the loopback upstream, so "refused" means no byte arrived.
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(upstream.url).port) });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });
  const acme = acmeOn(HOST, proxy.port);
  const saveAtomically = async (path: string, text: string) => {
    await writeFile(`${path}.tmp`, text);
    await rename(`${path}.tmp`, path);
  };

  const { gateway, path, put } = await start(withProviders('[]'), 'rebinding.yaml', dns.lookup);

  test('a provider admitted through the API is refused once its name re-resolves to loopback', async () => {
    const accepted = await put(withProviders('[]', acme));
    assert.equal(accepted.status, 200, await accepted.clone().text());
    assert.ok(dns.asked.includes(HOST), 'the submission check used the injected resolver');
    assert.deepEqual(gateway.guardedHosts.list(), [HOST]);

    hostAddress = '127.0.0.1';
    const before = proxy.accepted;
    await assertRefusedUpstream(await chat(gateway));
    assert.equal(proxy.accepted, before, 'no connection reached the loopback upstream');
    assert.equal(upstream.chatCount, 0);
  });

  test('it stays guarded when the operator edits something else in the file', async () => {
    await saveAtomically(path, (await readFile(path, 'utf8')).replace('models: [local-model]', 'models: [local-model, other-model]'));
    await eventually('the edit to apply', () => gateway.config().providers.local!.models.includes('other-model'));
    const before = proxy.accepted;
    await assertRefusedUpstream(await chat(gateway));
    assert.equal(proxy.accepted, before);
  });

  test('it connects once the operator names the host in api-call-allow', async () => {
    await saveAtomically(path, withProviders(`[${HOST}]`, acme));
    await eventually('the allow-list to apply', () => gateway.config()['remote-management']['api-call-allow'].includes(HOST));
    const response = await chat(gateway);
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(upstream.chatCount, 1);
  });

  test('the same provider written by the operator in the file connects although its name resolves to loopback', async () => {
    hostAddress = '127.0.0.1';
    const operator = await start(withProviders('[]', acme), 'rebinding-operator.yaml', dns.lookup);
    assert.deepEqual(operator.gateway.guardedHosts.list(), []);
    const response = await chat(operator.gateway);
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(upstream.chatCount, 2);
  });
});

describe('DNS rebinding: the hosts the API set stay guarded after a restart', async () => {
  const HOST = 'models.restart.test';
  let hostAddress = '93.184.216.34';
  const dns = stagedLookup((hostname) => (hostname === HOST ? hostAddress : new Error(`getaddrinfo ENOTFOUND ${hostname}`)));
  // Nothing listens on port 9: a refusal names SSRF_BLOCKED, a connection attempt would say ECONNREFUSED.
  const acme = acmeOn(HOST, 9);
  const first = await start(withProviders('[]'), 'restart.yaml', dns.lookup);
  const guardedFile = join(dirname(first.path), 'auths', GUARDED_HOSTS_FILE);

  test('the host is recorded in auth-dir (0600) before the config naming it is written', async () => {
    const accepted = await first.put(withProviders('[]', acme));
    assert.equal(accepted.status, 200, await accepted.clone().text());
    assert.deepEqual(JSON.parse(await readFile(guardedFile, 'utf8')).hosts, [HOST]);
    assert.equal((await stat(guardedFile)).mode & 0o777, 0o600);
  });

  test('a restart on the file the API wrote guards the host again', async () => {
    await first.gateway.close();
    hostAddress = '127.0.0.1';
    const restarted = await Gateway.start({
      config: parseConfig(await readFile(first.path, 'utf8')),
      configPath: first.path,
      logDestination: { write() {} },
      resolve: dns.lookup,
    });
    gateways.push(restarted);
    assert.deepEqual(restarted.guardedHosts.list(), [HOST]);
    await assertRefusedUpstream(await chat(restarted));
    await restarted.close();
  });

  test('an unreadable record refuses the start rather than trust the hosts it listed', async () => {
    await writeFile(guardedFile, '{"format_version": 1, "hosts": [');
    await assert.rejects(
      Gateway.start({ config: parseConfig(await readFile(first.path, 'utf8')), configPath: first.path, logDestination: { write() {} } }),
      (error: Error) => error instanceof GuardedHostsUnreadableError && error.message.includes(GUARDED_HOSTS_FILE),
    );
  });

  test('a PUT whose hosts cannot be recorded is refused (503) and writes nothing', async () => {
    const other = await start(withProviders('[]'), 'unrecordable.yaml', dns.lookup);
    await mkdir(join(dirname(other.path), 'auths', GUARDED_HOSTS_FILE)); // the atomic rename onto it fails, even for root
    hostAddress = '93.184.216.34';
    const refused = await other.put(withProviders('[]', acme));
    assert.equal(refused.status, 503, await refused.clone().text());
    assert.equal((await json(refused)).error.code, 'service_unavailable');
    assert.equal(await readFile(other.path, 'utf8'), withProviders('[]'), 'the config file is unchanged');
    assert.equal(other.gateway.config().providers.acme, undefined, 'and not applied');
  });
});
