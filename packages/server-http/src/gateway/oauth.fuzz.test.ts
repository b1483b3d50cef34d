import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { startSignInGateway } from '../../test/signInFixture.js';

const KEY = 'oauth-fuzz-secret';
const { auth, gateway, close } = await startSignInGateway(KEY);
// Every sign-in a random body happens to start is refused at once by the fake, so none stays pending.
auth.script = ['access_denied'];
after(close);

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
