import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startTestGateway } from '../../test/startTestGateway.js';
import { parseConfig } from './config/load.js';

const KEY = 'running-secret';
const SEALING_KEY = 'cd'.repeat(32);
const CONFIG = `
port: 0
api-keys: [sk-client]
remote-management: { secret-key: ${KEY} }
providers:
  alpha: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
`;

const { gateway } = await startTestGateway(CONFIG);

// biome-ignore lint/suspicious/noExplicitAny: response bodies are probed field by field
async function runningConfig(): Promise<Record<string, any>> {
  const response = await fetch(`${gateway.url}/v0/management/config`, { headers: { authorization: `Bearer ${KEY}` } });
  assert.equal(response.status, 200);
  return response.json() as never;
}

async function putConfig(text: string) {
  const response = await fetch(`${gateway.url}/v0/management/config.yaml`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/yaml' },
    body: text,
  });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as { restart_needed: string[] };
}

describe('GET /v0/management/config while a restart is pending', () => {
  test('shows the running values, with each pending path and its new value apart (secrets redacted)', async () => {
    const next = `${CONFIG.replace('port: 0', 'port: 18999').replace('models: [demo-model]', 'models: [demo-model, extra-model]')}auth:\n  encryption: { enabled: true, key: '${SEALING_KEY}' }\n`;
    assert.deepEqual((await putConfig(next)).restart_needed, ['port', 'auth.encryption']);
    const body = await runningConfig();
    // Read at start: what the process runs is still the start value.
    assert.equal(body.port, 0);
    assert.equal(body.auth.encryption.enabled, false);
    // Applied at once: the running config has it.
    assert.deepEqual(body.providers.alpha.models, ['demo-model', 'extra-model']);
    assert.deepEqual(body.restart_needed, ['port', 'auth.encryption']);
    assert.equal(body.pending.port, 18999);
    assert.equal(body.pending['auth.encryption'].enabled, true);
    assert.equal(body.pending['auth.encryption'].key, '***');
    assert.ok(!JSON.stringify(body).includes(SEALING_KEY), 'a pending secret is redacted');
    assert.ok(!JSON.stringify(body).includes(KEY), 'the running secrets are redacted');
  });

  test('a change undone leaves nothing pending', async () => {
    assert.deepEqual((await putConfig(CONFIG)).restart_needed, []);
    const body = await runningConfig();
    assert.deepEqual(body.restart_needed, []);
    assert.deepEqual(body.pending, {});
    assert.deepEqual(body.providers.alpha.models, ['demo-model']);
  });

  test("a provider's sign-in flow waits for a restart: the running provider has none, the pending one is listed", async () => {
    const oauth =
      '{ device_authorization_url: "https://auth.example/device", token_url: "https://auth.example/token", client_id: c, client_secret: shh-oauth }';
    const withFlow = parseConfig(
      `${CONFIG}`.replace('providers:\n', `providers:\n  beta: { kind: mock, models: [demo-model], oauth: ${oauth} }\n`),
    );
    assert.deepEqual(gateway.reload(withFlow).restartNeeded, ['providers.*.oauth']);
    const body = await runningConfig();
    assert.deepEqual(body.providers.beta.models, ['demo-model'], 'the provider itself is applied');
    assert.equal(body.providers.beta.oauth, undefined, 'its flow is not registered until a restart');
    assert.deepEqual(Object.keys(body.pending['providers.*.oauth']), ['beta']);
    assert.equal(body.pending['providers.*.oauth'].beta.client_id, 'c');
    assert.equal(body.pending['providers.*.oauth'].beta.client_secret, '***');
    assert.ok(!JSON.stringify(body).includes('shh-oauth'));
    gateway.reload(parseConfig(CONFIG));
  });

  test('the management lockout policy and the websocket limits set at start are listed in restart_needed', async () => {
    const changed = CONFIG.replace(
      `remote-management: { secret-key: ${KEY} }`,
      `remote-management: { secret-key: ${KEY}, max-failures: 9, lockout-duration: 5m }`,
    ).concat('server:\n  websocket: { max_message_size: 2M, ping_interval: 10s, high_water_mark: 2M, max_in_flight: 4 }\n');
    assert.deepEqual(gateway.reload(parseConfig(changed)).restartNeeded, [
      'remote-management.max-failures',
      'remote-management.lockout-duration',
      'server.websocket.max_message_size',
      'server.websocket.ping_interval',
      'server.websocket.high_water_mark',
    ]);
    assert.deepEqual(gateway.reload(parseConfig(CONFIG)).restartNeeded, []);
  });
});
