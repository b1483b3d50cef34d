/**
 * Runs the three node configs of examples/multi-node (the docs/multi-node.md
 * walk-through) against the test PostgreSQL: only the ports, the auth-dirs
 * and the channels change (free ports; this file's own channels), the
 * secrets come from the environment as in the walk-through. Skips without
 * PostgreSQL locally; runs in CI.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateEncryptionKey } from '@switchyard/credentials';
import { eventually, postgresForTests } from '@switchyard/test-support';
import { readConfigFile, startGatewayNodes } from '../../packages/server-http/test/gatewayProcesses.js';

const postgres = await postgresForTests(import.meta.url);
const MANAGEMENT_KEY = 'walk-through-management-key';

test('the three example nodes share a credential and answer on every node', { skip: postgres.skip, timeout: 90_000 }, async () => {
  if (!postgres.available) return;
  const suffix = randomBytes(4).toString('hex');
  const files = ['a', 'b', 'c'].map((n) => fileURLToPath(new URL(`./node-${n}.yaml`, import.meta.url)));
  const { nodes } = await startGatewayNodes({
    count: 3,
    env: {
      SWITCHYARD_DATABASE_URL: postgres.url,
      SWITCHYARD_ENCRYPTION_KEY: generateEncryptionKey(),
      SWITCHYARD_MANAGEMENT_KEY: MANAGEMENT_KEY,
    },
    config: ({ index, urls, dir }) => {
      const config = readConfigFile(files[index]!);
      const server = config.server as { failover: Record<string, unknown> };
      const cluster = config.cluster as Record<string, unknown>;
      return {
        ...config,
        port: Number(new URL(urls[index]!).port),
        'auth-dir': `${dir}/auths`,
        metrics: { enabled: false },
        server: { ...server, failover: { ...server.failover, self_url: urls[index], peers: urls.filter((_, j) => j !== index) } },
        cluster: {
          ...cluster,
          auth_events_channel: `ex_auth_${suffix}`,
          cooldown_channel: `ex_cooldown_${suffix}`,
          quota_channel: `ex_quota_${suffix}`,
        },
      };
    },
  });
  const [a, b, c] = nodes as [(typeof nodes)[number], (typeof nodes)[number], (typeof nodes)[number]];
  const management = { authorization: `Bearer ${MANAGEMENT_KEY}`, 'content-type': 'application/json' };
  for (const node of nodes) {
    const status = (await (await fetch(`${node.url}/v0/operations/cluster/status`, { headers: management })).json()) as {
      node_id: string;
      listeners: { auth_events: { connected: boolean } };
    };
    assert.equal(status.node_id, `node-${'abc'[node.index]}`);
    assert.equal(status.listeners.auth_events.connected, true);
  }
  // The walk-through's step: add a key on node A, see it on node B.
  const added = await fetch(`${a.url}/v0/management/auths`, {
    method: 'POST',
    headers: management,
    body: JSON.stringify({ id: 'openai-team', provider: 'openai', type: 'api_key', token: 'sk-example-not-real' }),
  });
  assert.equal(added.status, 201);
  let seen: { id: string }[] = [];
  await eventually('node B to hold the key', async () => {
    seen = ((await (await fetch(`${b.url}/v0/management/auths`, { headers: management })).json()) as { auths: { id: string }[] }).auths;
    return seen.some((auth) => auth.id === 'openai-team');
  });
  assert.deepEqual(
    seen.map((auth) => auth.id),
    ['openai-team'],
  );
  const answer = await fetch(`${c.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-local-client', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: 'hello' }] }),
  });
  assert.equal(answer.status, 200);
});
