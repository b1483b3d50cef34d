/**
 * Client keys on three gateway nodes sharing one PostgreSQL (`cluster.enabled`): a key created on
 * one node is served by every node, a revoked key is refused on every node within a second (LISTEN/
 * NOTIFY), and a budget holds exactly across nodes (reservations in one database function).
 * Skipped, with a message, where PostgreSQL is not reachable.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { generateEncryptionKey } from '@switchyard/credentials';
import { postgresForTests, sqlOnce } from '@switchyard/test-support';
import { Agent, fetch as undiciFetch } from 'undici';
import { parseConfig } from '../gateway/config/load.js';
import { Gateway } from '../gateway/gateway.js';

const postgres = await postgresForTests(import.meta.url);
// biome-ignore lint/suspicious/noExplicitAny: the tests read the API's JSON freely; the routes' schemas type it
type Json = Record<string, any>;
const MANAGEMENT_KEY = 'client-keys-cluster-key';
const suffix = randomBytes(4).toString('hex');
const dispatcher = new Agent({ connections: 200 });
after(() => dispatcher.close());

async function startNodes(url: string): Promise<Gateway[]> {
  const key = generateEncryptionKey();
  const nodes: Gateway[] = [];
  for (const name of ['a', 'b', 'c']) {
    const config = parseConfig(
      JSON.stringify({
        port: 0,
        'remote-management': { 'secret-key': MANAGEMENT_KEY },
        auth: { encryption: { enabled: true, key }, refresh: { enabled: false } },
        providers: { acme: { kind: 'mock', models: ['acme-model'] } },
        metrics: { enabled: false },
        server: { http: { max_connections: 1000 } },
        cluster: {
          enabled: true,
          database_url: url,
          node_id: `node-${name}`,
          auth_events_channel: `t_auth_${suffix}`,
          cooldown_channel: `t_cooldown_${suffix}`,
          quota_channel: `t_quota_${suffix}`,
          signin_channel: `t_signin_${suffix}`,
          client_keys_channel: `t_keys_${suffix}`,
          refresh_lock_namespace: `t-refresh-${suffix}`,
        },
      }),
    );
    const gateway = await Gateway.start({ config, logDestination: { write() {} } });
    after(() => gateway.close());
    nodes.push(gateway);
  }
  return nodes;
}

async function manage(gateway: Gateway, method: string, path: string, body?: unknown) {
  const response = await fetch(`${gateway.url}/v0/management/client-keys${path}`, {
    method,
    headers: { authorization: `Bearer ${MANAGEMENT_KEY}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function ask(gateway: Gateway, secret: string): Promise<number> {
  const response = await undiciFetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'acme-model', messages: [{ role: 'user', content: 'hi' }] }),
    dispatcher,
  });
  await response.arrayBuffer();
  return response.status;
}

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('client keys in a cluster of three', { skip: postgres.skip }, async () => {
  if (!postgres.available) return;
  const nodes = await startNodes(postgres.url);
  const [a, b, c] = nodes as [Gateway, Gateway, Gateway];

  test('a key created on one node is served by all; revoked, it is refused on every node within one second', async () => {
    const created = await manage(a, 'POST', '', { name: 'shared', tenant: 'team-x' });
    assert.equal(created.status, 201);
    const { secret } = created.body;
    await until('every node to serve the key', async () => (await Promise.all(nodes.map((n) => ask(n, secret)))).every((s) => s === 200));
    const revoked = await manage(b, 'POST', `/${created.body.key.id}/revoke`);
    assert.equal(revoked.status, 200);
    const revokedAt = Date.now();
    await until(
      'every node to refuse it',
      async () => (await Promise.all(nodes.map((n) => ask(n, secret)))).every((s) => s === 401),
      1_000,
    );
    assert.ok(Date.now() - revokedAt < 1_000);
    assert.equal((await manage(c, 'GET', `/${created.body.key.id}`)).body.revoked, true);
  });

  test('a budget of 100 requests, 400 at once over three nodes: exactly 100 succeed and 300 are refused', async () => {
    const created = await manage(c, 'POST', '', { name: 'budget-100', budget: { limit: 100, unit: 'requests', period: 'monthly' } });
    const { secret, key } = created.body;
    await until('every node to know the key', async () => nodes.every((n) => n.clientKeys.get(key.id) !== undefined));
    const statuses = await Promise.all(Array.from({ length: 400 }, (_, i) => ask(nodes[i % 3]!, secret)));
    const count = (status: number) => statuses.filter((s) => s === status).length;
    assert.deepEqual({ ok: count(200), refused: count(429) }, { ok: 100, refused: 300 });
    // Settlements are written after the answers: wait for the last of them.
    await until('the ledger to settle', async () => {
      const { rows } = await sqlOnce(postgres.url, 'SELECT used FROM switchyard_client_key_budgets WHERE id = $1', [key.id]);
      return Number(rows[0]?.used) === 100;
    });
    const { rows } = await sqlOnce(postgres.url, 'SELECT count(*) AS open FROM switchyard_client_key_reservations WHERE id = $1', [key.id]);
    assert.equal(Number(rows[0].open), 0, 'every reservation settled');
  });
});
