/**
 * Every credential of a provider rate limited: while their cooldowns run,
 * clients hear 429 `rate_limit_error` with a `Retry-After` until the first
 * credential returns, the way the upstream's own 429 read, rather than a
 * 503 `no_credentials` that reads as a broken gateway and gives no time;
 * and a burst of them does not hold the provider out for longer than that.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startTestGateway } from '../../test/startTestGateway.js';

/** A gateway over one provider whose upstream answers every call 429 (`Retry-After: 40`), with keys `one` and `two`. */
async function keyedGateway(operationsYaml: string) {
  let calls = 0;
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
        return;
      }
      calls++;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '40' });
      res.end(JSON.stringify({ error: { message: 'rate limited', type: 'rate_limit_error' } }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const dir = await mkdtemp(join(tmpdir(), 'gateway-credential-cooldown-'));
  const { gateway } = await startTestGateway(`
port: 0
api-keys: [sk-client]
auth-dir: ${join(dir, 'auths')}
providers:
  keyed:
    kind: openai-compatible
    base_url: http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1
    models: [up-model]
server:
  operations:
${operationsYaml}
metrics: { enabled: false }
`);
  after(async () => {
    await gateway.close();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });
  await gateway.credentials.manager.add({ id: 'one', provider: 'keyed', type: 'api_key', token: 'key-one' });
  await gateway.credentials.manager.add({ id: 'two', provider: 'keyed', type: 'api_key', token: 'key-two' });
  const ask = () =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json', 'cache-control': 'no-cache' },
      body: JSON.stringify({ model: 'up-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
  return { gateway, ask, calls: () => calls };
}

test('all credentials cooling after 429s: the next request is 429 with Retry-After, not 503 no_credentials', async () => {
  const { gateway, ask, calls } = await keyedGateway(`
    # The provider itself must not cool down: this is about its credentials.
    cooldown: { error_threshold: 100 }
    health_check: { enabled: false }`);

  const first = await ask();
  assert.equal(first.status, 429, 'the upstream 429 goes back');
  await first.arrayBuffer();
  assert.equal(calls(), 2, 'both credentials were tried');
  assert.ok(
    gateway.credentials.manager.list('keyed').every((r) => r.cooldown_until !== null),
    'both credentials cool down',
  );

  const second = await ask();
  const body = (await second.json()) as { error: { type: string; code: string; message: string } };
  assert.equal(second.status, 429, `got ${second.status} ${JSON.stringify(body)}`);
  assert.equal(body.error.type, 'rate_limit_error');
  assert.notEqual(body.error.code, 'no_credentials');
  assert.match(body.error.message, /every credential of keyed is cooling down/);
  const retryAfter = Number(second.headers.get('retry-after'));
  assert.ok(retryAfter >= 30 && retryAfter <= 40, `Retry-After ${second.headers.get('retry-after')} runs to the first credential's return`);
  assert.equal(calls(), 2, 'nothing went upstream while every credential was cooling');
});

test('a burst while every credential cools: all 429 with Retry-After to the first return, no upstream call, and the provider not held out longer', async () => {
  // The default error_threshold (5): the burst's requests, each finding no credential, cool the provider itself.
  const { gateway, ask, calls } = await keyedGateway('    health_check: { interval: 10m }');
  const first = await ask();
  assert.equal(first.status, 429);
  await first.arrayBuffer();
  assert.equal(calls(), 2);
  const credentialsReturn = Math.min(...gateway.credentials.manager.list('keyed').map((r) => Date.parse(r.cooldown_until ?? '')));
  const providerChanges: string[] = [];
  gateway.cooldowns.events.on('cooldown:start', (p) => p.key === 'keyed' && providerChanges.push('start'));
  gateway.cooldowns.events.on('cooldown:update', (e) => e.period.key === 'keyed' && providerChanges.push('update'));

  const burst = await Promise.all(
    Array.from({ length: 30 }, async () => {
      const response = await ask();
      await response.arrayBuffer();
      return { status: response.status, retryAfter: Number(response.headers.get('retry-after')) };
    }),
  );
  assert.equal(calls(), 2, 'nothing went upstream');
  for (const { status, retryAfter } of burst) {
    assert.equal(status, 429);
    assert.ok(retryAfter >= 30 && retryAfter <= 40, `Retry-After ${retryAfter} runs to the first credential's return, not past it`);
  }
  const period = gateway.cooldowns.period('keyed');
  assert.ok(period, 'the provider cools down while none of its credentials can serve');
  assert.ok(
    period.endsAt <= credentialsReturn,
    `the provider returns with its first credential (${period.endsAt - credentialsReturn} ms after it)`,
  );
  // Started with its end, not started and then cut: one write for a cluster's store, not two (a node
  // applying its own first write back after the second could hold, and recover, the wrong period).
  assert.deepEqual(providerChanges, ['start']);
});
