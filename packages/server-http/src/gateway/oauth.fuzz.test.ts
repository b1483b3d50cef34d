import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FakeAuthServer } from '@switchyard/test-support';
import fc from 'fast-check';
import { parseConfig } from './config/load.js';
import { Gateway } from './gateway.js';

const KEY = 'oauth-fuzz-secret';
const auth = await new FakeAuthServer().start();
// Every sign-in a random body happens to start is refused at once by the fake, so none stays pending.
auth.script = ['access_denied'];
auth.interval = 0.05;
const dir = await mkdtemp(join(tmpdir(), 'oauth-fuzz-'));
const gateway = await Gateway.start({
  config: parseConfig(`
port: 0
auth-dir: ${dir}
remote-management: { secret-key: ${KEY} }
providers:
  cloud:
    kind: mock
    oauth: { preset: cloud-coding-assistant, oidc_url: '${auth.url}/oidc/{region}' }
metrics: { enabled: false }
`),
  logDestination: { write() {} },
});
after(async () => {
  await gateway.close();
  await auth.stop();
  await rm(dir, { recursive: true, force: true });
});

const post = (body: string) =>
  fetch(`${gateway.url}/v0/oauth/cloud-coding-assistant/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body,
  });

test('1,000 random bodies to POST /v0/oauth/{flow}/sessions: never a 500, and the gateway still answers', {
  timeout: 120_000,
}, async () => {
  const mode = fc.constantFrom('builder-id', 'identity-center', 'team', '');
  const nearlyValid = fc.record(
    {
      mode,
      start_url: fc.oneof(fc.webUrl(), fc.string()),
      region: fc.oneof(fc.constant('eu-central-1'), fc.string()),
      priority: fc.anything(),
    },
    { requiredKeys: [] },
  );
  const body = fc.oneof(
    fc.jsonValue().map((value) => JSON.stringify(value)),
    nearlyValid.map((value) => JSON.stringify(value)),
    fc.string(),
  );
  await fc.assert(
    fc.asyncProperty(body, async (text) => {
      const response = await post(text);
      await response.arrayBuffer();
      assert.ok([201, 400, 422, 502].includes(response.status), `HTTP ${response.status} for ${text}`);
    }),
    { numRuns: 1000 },
  );
  const health = await fetch(`${gateway.url}/health`);
  assert.equal(health.status, 200);
});
