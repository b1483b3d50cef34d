/**
 * Usage in cluster mode: three gateway nodes on one PostgreSQL each account
 * the requests they serve, and any node's `GET /v0/management/usage` is the
 * sum of every node's, also after a node has shut down. Skipped, with a
 * message, when PostgreSQL is not reachable.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { FAKE_USAGE, postgresForTests, sqlOnce, startFakeOpenAi } from '@switchyard/test-support';
import OpenAI from 'openai';
import { startClusterNodes, testCluster } from '../../../test/startClusterNode.js';
import type { Gateway } from '../gateway.js';

const postgres = await postgresForTests(import.meta.url);
const MANAGEMENT_KEY = 'usage-cluster-management-key-0123456789';

async function startNodes(url: string, upstreamUrl: string): Promise<Gateway[]> {
  const cluster = testCluster(url);
  return startClusterNodes(cluster, 3, {
    port: 0,
    'api-keys': [
      { key: 'sk-alice', name: 'alice', tenant: 'team-a' },
      { key: 'sk-bob', name: 'bob', tenant: 'team-b' },
    ],
    'remote-management': { 'secret-key': MANAGEMENT_KEY },
    auth: { encryption: { enabled: true, key: cluster.encryptionKey }, refresh: { enabled: false } },
    providers: {
      up: { kind: 'openai-compatible', base_url: upstreamUrl, models: ['gpt-4o'], health_check: { enabled: false } },
    },
    metrics: { enabled: false },
    // Only reports (and close) write: each node's counts reach PostgreSQL when asked, not on a timer.
    usage: { flush_interval: '1h' },
  });
}

async function requestsByKey(gateway: Gateway): Promise<Record<string, number>> {
  const response = await fetch(`${gateway.url}/v0/management/usage?group_by=key`, {
    headers: { authorization: `Bearer ${MANAGEMENT_KEY}` },
  });
  assert.equal(response.status, 200);
  const report = (await response.json()) as { groups: { group: string; requests: number; input_tokens: number }[] };
  return Object.fromEntries(report.groups.map((g) => [g.group, g.requests]));
}

test('three nodes: each accounts what it serves, and every node reports the sum', { skip: postgres.skip }, async () => {
  if (!postgres.available) return;
  const upstream = await startFakeOpenAi();
  after(() => upstream.close());
  const nodes = await startNodes(postgres.url, upstream.url);
  const served = { a: [3, 1], b: [2, 2], c: [1, 0] } as const;
  await Promise.all(
    nodes.map(async (node, i) => {
      const [alice, bob] = served[(['a', 'b', 'c'] as const)[i]!];
      for (const [key, count] of [
        ['sk-alice', alice],
        ['sk-bob', bob],
      ] as const) {
        const client = new OpenAI({ apiKey: key, baseURL: `${node.url}/v1`, maxRetries: 0 });
        for (let n = 0; n < count; n++)
          await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `n${n}` }] });
      }
    }),
  );
  // Each node's report writes its own counts first; after every node has been asked once, all hold the sum.
  for (const node of nodes) await requestsByKey(node);
  for (const node of nodes) assert.deepEqual(await requestsByKey(node), { 'static:alice': 6, 'static:bob': 3 });
  const { rows } = await sqlOnce(
    postgres.url,
    'SELECT node_id, SUM(requests)::int AS requests, SUM(input_tokens)::int AS input FROM switchyard_usage_minutes GROUP BY node_id ORDER BY node_id',
  );
  assert.deepEqual(
    rows.map((r) => [r.node_id, r.requests, r.input]),
    [
      ['node-a', 4, 4 * FAKE_USAGE.input],
      ['node-b', 4, 4 * FAKE_USAGE.input],
      ['node-c', 1, FAKE_USAGE.input],
    ],
  );
  // A node's requests since its last write are written when it shuts down, and the others still count them.
  const bob = new OpenAI({ apiKey: 'sk-bob', baseURL: `${nodes[2]!.url}/v1`, maxRetries: 0 });
  await bob.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'last' }] });
  await nodes[2]!.close();
  assert.deepEqual(await requestsByKey(nodes[0]!), { 'static:alice': 6, 'static:bob': 4 });
});
