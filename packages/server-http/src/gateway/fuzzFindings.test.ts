/**
 * Regression tests for what the route fuzzer (fuzz.test.ts) found: each
 * body here once made the gateway answer 500 or hang.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startFakeGemini } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';

const KEY = 'findings-key';
const dir = await mkdtemp(join(tmpdir(), 'fuzz-findings-'));
const gemini = await startFakeGemini({});
const { gateway } = await startTestGateway(`
port: 0
auth-dir: ${join(dir, 'auths')}
remote-management: { secret-key: ${KEY} }
providers:
  gemini: { kind: gemini, base_url: "${gemini.url}", models: ["*"], health_check: { enabled: false } }
metrics: { enabled: false }
`);
await gateway.credentials.manager.add({ id: 'gemini-key', provider: 'gemini', type: 'api_key', token: 'tok' });
after(async () => {
  await gemini.close();
  await rm(dir, { recursive: true, force: true });
});

const post = (path: string, body: string, management = true) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(management ? { authorization: `Bearer ${KEY}` } : {}) },
    body,
    signal: AbortSignal.timeout(10_000),
  });

test('a manual cooldown too long for a timer is a 422 naming duration, not a 500 (and not a cooldown that ends at once)', async () => {
  for (const duration of ['8638204709353792', '1e308', '"100000000h"']) {
    const answer = await post('/v0/operations/providers/gemini/cooldown', `{"duration":${duration}}`);
    assert.equal(answer.status, 422, duration);
    const { error } = (await answer.json()) as { error: { code: string; details: { field: string } } };
    assert.equal(error.details.field, 'duration');
  }
  assert.equal(gateway.cooldowns.isCooling('gemini'), false);
  assert.equal((await post('/v0/operations/providers/gemini/cooldown', '{"duration":"24d"}')).status, 200);
  assert.equal(gateway.cooldowns.isCooling('gemini'), true);
  await gateway.cooldowns.recover('gemini');
});

test('a Gemini request with a null in contents gets an answer (the fake upstream used to hang on it)', async () => {
  const answer = await post('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', '{"contents":[null]}', false);
  assert.ok(answer.status < 500, `answered ${answer.status}`);
  await answer.text();
});
