/**
 * Client keys on three gateway nodes sharing one PostgreSQL (`cluster.enabled`): a key created on
 * one node is served by every node, a revoked key is refused on every node within a second (LISTEN/
 * NOTIFY), and a budget holds exactly across nodes (reservations in one database function), with the
 * usage report summing what every node served.
 * Skipped, with a message, where PostgreSQL is not reachable.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { eventually, postgresForTests, sqlOnce } from '@switchyard/test-support';
import { Agent, fetch as undiciFetch } from 'undici';
import { startClusterNodes, testCluster } from '../../test/startClusterNode.js';
import type { Gateway } from '../gateway/gateway.js';

const postgres = await postgresForTests(import.meta.url);
// biome-ignore lint/suspicious/noExplicitAny: the tests read the API's JSON freely; the routes' schemas type it
type Json = Record<string, any>;
const MANAGEMENT_KEY = 'client-keys-cluster-key';
const dispatcher = new Agent({ connections: 200 });
after(() => dispatcher.close());

async function startNodes(url: string): Promise<Gateway[]> {
  const cluster = testCluster(url);
  return startClusterNodes(cluster, 3, {
    port: 0,
    'remote-management': { 'secret-key': MANAGEMENT_KEY },
    auth: { encryption: { enabled: true, key: cluster.encryptionKey }, refresh: { enabled: false } },
    providers: { acme: { kind: 'mock', models: ['acme-model'] } },
    metrics: { enabled: false },
    server: { http: { max_connections: 1000 } },
  });
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

/** The requests `GET /v0/management/usage?group_by=key` counts for `keyId`, as `gateway` reports them. */
async function requestsOf(gateway: Gateway, keyId: string): Promise<number> {
  const response = await fetch(`${gateway.url}/v0/management/usage?group_by=key`, {
    headers: { authorization: `Bearer ${MANAGEMENT_KEY}` },
  });
  assert.equal(response.status, 200);
  const report = (await response.json()) as { groups: { group: string; requests: number }[] };
  return report.groups.find((group) => group.group === keyId)?.requests ?? 0;
}

describe('client keys in a cluster of three', { skip: postgres.skip }, async () => {
  if (!postgres.available) return;
  const nodes = await startNodes(postgres.url);
  const [a, b, c] = nodes as [Gateway, Gateway, Gateway];

  test('a key created on one node is served by all; revoked, it is refused on every node within one second', async () => {
    const created = await manage(a, 'POST', '', { name: 'shared', tenant: 'team-x' });
    assert.equal(created.status, 201);
    const { secret } = created.body;
    await eventually(
      'every node to serve the key',
      async () => (await Promise.all(nodes.map((n) => ask(n, secret)))).every((s) => s === 200),
      5_000,
    );
    const revoked = await manage(b, 'POST', `/${created.body.key.id}/revoke`);
    assert.equal(revoked.status, 200);
    const revokedAt = Date.now();
    await eventually(
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
    await eventually('every node to know the key', () => nodes.every((n) => n.clientKeys.get(key.id) !== undefined), 5_000);
    const statuses = await Promise.all(Array.from({ length: 400 }, (_, i) => ask(nodes[i % 3]!, secret)));
    const count = (status: number) => statuses.filter((s) => s === status).length;
    assert.deepEqual({ ok: count(200), refused: count(429) }, { ok: 100, refused: 300 });
    // Settlements are written after the answers: wait for the last of them.
    await eventually(
      'the ledger to settle',
      async () => {
        const { rows } = await sqlOnce(postgres.url, 'SELECT used FROM switchyard_client_key_budgets WHERE id = $1', [key.id]);
        return Number(rows[0]?.used) === 100;
      },
      5_000,
    );
    const { rows } = await sqlOnce(postgres.url, 'SELECT count(*) AS open FROM switchyard_client_key_reservations WHERE id = $1', [key.id]);
    assert.equal(Number(rows[0].open), 0, 'every reservation settled');
    // The usage report: each node writes its own counts when asked, so after every node has been asked once
    // each one reports the sum over all three, and the refused requests (never relayed) are not in it.
    for (const node of nodes) await requestsOf(node, key.id);
    for (const node of nodes) assert.equal(await requestsOf(node, key.id), 100, 'the usage report sums to 100');
  });
});
