import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parseConfig } from './config/load.js';
import { Gateway } from './gateway.js';

// PUT /v0/management/config.yaml may not aim the gateway at its own network: every outbound URL the new
// config adds or changes goes through the SSRF guard. Only loopback is ever contacted (mock providers).

const dir = await mkdtemp(join(tmpdir(), 'config-ssrf-'));
const gateways: Gateway[] = [];
after(async () => {
  for (const gateway of gateways) await gateway.close();
  await rm(dir, { recursive: true, force: true });
});

const KEY = 'mgmt-secret';
const config = (allow: string, extra = '') => `
port: 0
api-keys: [sk-client]
remote-management:
  secret-key: ${KEY}
  api-call-allow: ${allow}
providers:
  local:
    kind: mock
    base_url: http://127.0.0.1:11434
    models: [local-model]
${extra}metrics:
  port: 0
`;

async function start(text: string, name: string) {
  const path = join(dir, name);
  await writeFile(path, text);
  const gateway = await Gateway.start({ config: parseConfig(text), configPath: path, logDestination: { write() {} } });
  gateways.push(gateway);
  const put = (body: string) =>
    fetch(`${gateway.url}/v0/management/config.yaml`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/yaml' },
      body,
    });
  return { gateway, path, put };
}

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
