/**
 * Three gateways in one process on one PostgreSQL (`cluster.enabled`), for
 * what needs a look inside: concurrent refresh triggers on every node spend
 * the refresh token once, management writes publish events that say who
 * and which request, and the `svc_cluster_*` metrics. The process-level
 * tests are in test/cluster.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { deviceCodeFlow } from '@switchyard/credentials';
import { eventually, postgresForTests, requirePromtool } from '@switchyard/test-support';
import pg from 'pg';
import { clusterSettings, startClusterNode, type TestCluster, testCluster } from '../../test/startClusterNode.js';
import type { Gateway } from './gateway.js';

const postgres = await postgresForTests(import.meta.url);
const promtool = requirePromtool();
const MANAGEMENT_KEY = 'cluster-in-process-key';

/** A token endpoint on loopback that counts refresh grants and answers slowly, to widen any race. */
async function fakeTokenEndpoint() {
  const grants: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      grants.push(new URLSearchParams(body).get('refresh_token') ?? '');
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: `new-token-${grants.length}`, refresh_token: `rt-${grants.length + 1}`, expires_in: 3600 }));
      }, 100);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, grants };
}

async function startNodes(cluster: TestCluster, tokenUrl: string): Promise<Gateway[]> {
  const flow = () =>
    deviceCodeFlow({
      name: 'acme',
      provider: 'acme',
      clientId: 'switchyard',
      deviceAuthorizationUrl: `${tokenUrl}/device`,
      tokenUrl: `${tokenUrl}/token`,
    });
  const nodes: Gateway[] = [];
  for (const name of ['a', 'b', 'c']) {
    const config = {
      port: 0,
      // api-call may reach the loopback usage server of the auth_index test.
      'remote-management': { 'secret-key': MANAGEMENT_KEY, 'api-call-allow': ['127.0.0.1'] },
      auth: { encryption: { enabled: true, key: cluster.encryptionKey }, refresh: { enabled: false } },
      providers: {
        acme: { kind: 'mock', models: ['acme-model'] },
        assistant: { kind: 'code-assistant', models: ['assistant-model'], health_check: { enabled: false } },
      },
      metrics: { enabled: true, port: 0 },
    };
    nodes.push(await startClusterNode(cluster, `node-${name}`, config, { flows: [flow()] }));
  }
  return nodes;
}

interface SchemaObject {
  properties?: Record<string, SchemaObject>;
}
interface OpenApiDocument {
  components: { schemas: { ClusterStatus: { anyOf: SchemaObject[] } } };
}

async function manage(gateway: Gateway, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${MANAGEMENT_KEY}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('gateways in a cluster (in process)', { skip: postgres.skip }, async () => {
  if (!postgres.available) return;
  const endpoint = await fakeTokenEndpoint();
  const cluster = testCluster(postgres.url);
  // The channel the nodes publish credential events on, which a test listens to.
  const channel = clusterSettings(cluster, 'listener').auth_events_channel;
  const nodes = await startNodes(cluster, endpoint.url);
  const [a, b, c] = nodes as [Gateway, Gateway, Gateway];

  test('management writes publish events naming the actor and the request', async () => {
    const listener = new pg.Client({ connectionString: postgres.url });
    await listener.connect();
    after(() => listener.end());
    const payloads: Record<string, Record<string, unknown>>[] = [];
    listener.on('notification', (message) => payloads.push(JSON.parse(message.payload ?? '{}')));
    await listener.query(`LISTEN ${channel}`);
    const added = await manage(
      a,
      'POST',
      '/v0/management/auths',
      { id: 'key-1', provider: 'acme', type: 'api_key', token: 'sk-acme-1' },
      {
        'x-request-id': 'req-correlated-1',
      },
    );
    assert.equal(added.status, 201);
    await eventually('the event', () => payloads.some((p) => p.subject?.auth_id === 'key-1'));
    const event = payloads.find((p) => p.subject?.auth_id === 'key-1')!;
    assert.deepEqual(event.correlation, { request_id: 'req-correlated-1', actor: 'management-api' });
    assert.equal(event.origin?.node_id, 'node-a');
    assert.doesNotMatch(JSON.stringify(event), /sk-acme-1/, 'no secret in the payload');
    await eventually('node c to hold the key', () => c.credentials.manager.list('acme').some((r) => r.id === 'key-1'));
    assert.equal((await manage(a, 'DELETE', '/v0/management/auths/acme?id=key-1')).status, 200);
    await eventually('node c to drop the key', () => !c.credentials.manager.list('acme').some((r) => r.id === 'key-1'));
  });

  test('auth-files, provider-a-quota and api-call with auth_index work on PostgreSQL (they answered 501)', async () => {
    const usage = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ saw_token: req.headers.authorization === 'Bearer sk-assistant-1' }));
    });
    await new Promise<void>((resolve) => usage.listen(0, '127.0.0.1', resolve));
    after(() => new Promise<void>((resolve) => usage.close(() => resolve())));
    const added = await manage(a, 'POST', '/v0/management/auths', {
      id: 'assistant-1',
      provider: 'assistant',
      type: 'api_key',
      token: 'sk-assistant-1',
    });
    assert.equal(added.status, 201);
    await eventually('nodes b and c to hold it', () =>
      [b, c].every((node) => node.credentials.manager.list('assistant').some((r) => r.id === 'assistant-1')),
    );

    // Listed on another node, in the file store's shape.
    const listed = await manage(b, 'GET', '/v0/management/auth-files');
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const files = listed.body.files as { id: string; name: string; provider: string; auth_index: number; size: number; modtime: string }[];
    assert.deepEqual(
      files.map((f) => f.auth_index),
      files.map((_, i) => i),
    );
    const file = files.find((f) => f.id === 'assistant-1')!;
    assert.equal(file.name, 'assistant-1.json');
    assert.equal(file.provider, 'assistant');
    assert.ok(file.size > 0 && !Number.isNaN(Date.parse(file.modtime)));
    assert.doesNotMatch(JSON.stringify(listed.body), /sk-assistant-1/, 'no token in the listing');

    // The same auth_index names the same credential on every node.
    const quota = await manage(c, 'GET', `/v0/management/provider-a-quota?auth_index=${file.auth_index}`);
    assert.equal(quota.status, 200, JSON.stringify(quota.body));
    const [snapshot] = quota.body.snapshots as { auth_index: number; source: string }[];
    assert.equal(snapshot!.auth_index, file.auth_index);
    assert.equal(snapshot!.source, 'local');

    const called = await manage(a, 'POST', '/v0/management/api-call', {
      auth_index: file.auth_index,
      url: `http://127.0.0.1:${(usage.address() as AddressInfo).port}/usage`,
      header: { authorization: 'Bearer $TOKEN$' },
    });
    assert.equal(called.status, 200, JSON.stringify(called.body));
    assert.deepEqual(JSON.parse(called.body.body as string), { saw_token: true });
    assert.equal((await manage(a, 'DELETE', '/v0/management/auths/assistant?id=assistant-1')).status, 200);
  });

  test('concurrent refresh triggers on all three nodes call the token endpoint exactly once', async () => {
    const added = await manage(a, 'POST', '/v0/management/auths', {
      id: 'acme-oauth',
      provider: 'acme',
      type: 'oauth',
      token: 'old-token',
      refresh_token: 'rt-1',
      oauth: { flow: 'acme' },
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    await eventually('every node to hold the credential', () => nodes.every((n) => n.credentials.manager.list('acme').length === 1));
    const answers = await Promise.all(
      [a, b, c, a, b, c].map((node) => manage(node, 'POST', '/v0/management/auths/acme/refresh?id=acme-oauth')),
    );
    assert.deepEqual(
      answers.map((x) => x.status),
      [200, 200, 200, 200, 200, 200],
      JSON.stringify(answers.map((x) => x.body)),
    );
    assert.deepEqual(endpoint.grants, ['rt-1'], 'one grant, with the original refresh token');
    await eventually('every node to serve the new token', () =>
      nodes.every((n) => n.credentials.manager.pool('acme').acquire().token === 'new-token-1'),
    );
  });

  test('a config reload on one node is a signal to the others, published once', async () => {
    const before = [b, c].map((n) => n.cluster!.status().config_reload_signals);
    a.reload(a.config());
    await eventually('b and c to hear it', () => [b, c].every((n, i) => n.cluster!.status().config_reload_signals === before[i]! + 1));
    assert.equal(a.cluster!.status().config_reload_signals, 0, 'a node does not hear its own signal');
    // Hearing a signal publishes nothing back: the count stays at one.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(
      [b, c].map((n) => n.cluster!.status().config_reload_signals),
      before.map((n) => n + 1),
    );
  });

  test('svc_cluster_* metrics are exposed with bounded labels', async () => {
    const text = await b.observability.registry!.metrics();
    for (const outcome of ['applied', 'duplicate', 'stale', 'invalid', 'own', 'repaired']) {
      assert.match(text, new RegExp(`svc_cluster_events_total\\{outcome="${outcome}"\\} \\d+`));
    }
    assert.match(text, /svc_cluster_events_total\{outcome="applied"\} [1-9]/, 'b applied events from a');
    assert.match(text, /svc_cluster_listener_connected\{listener="auth_events"\} 1/);
    assert.match(text, /svc_cluster_reconnects_total\{listener="cooldowns"\} 0/);
    for (const outcome of ['admitted', 'refused', 'failed', 'stalled', 'skipped']) {
      assert.match(text, new RegExp(`svc_cluster_quota_admissions_total\\{outcome="${outcome}"\\} \\d+`));
    }
    assert.match(text, /svc_cluster_listener_connected\{listener="quota"\} 1/);
    assert.match(text, /svc_cluster_listener_connected\{listener="sign_ins"\} 1/);
    if (promtool.available) promtool.checkMetrics(text);
    const status = (await manage(b, 'GET', '/v0/operations/cluster/status')).body;
    assert.equal((status.events as { applied: number }).applied > 0, true);
    const { stalled, skipped } = status.quota_admissions as Record<string, number>;
    assert.deepEqual({ stalled, skipped }, b.credentials.manager.quotaAdmissions(), 'the node’s own admission decisions');
    // What /openapi.json promises is what the route answers: the same fields, the same listeners.
    const documented = (
      (await (await fetch(`${b.url}/openapi.json`)).json()) as OpenApiDocument
    ).components.schemas.ClusterStatus.anyOf.find((branch) => 'node_id' in (branch.properties ?? {}))!.properties!;
    assert.deepEqual(Object.keys(status).sort(), Object.keys(documented).sort());
    assert.deepEqual(Object.keys(status.listeners as object).sort(), Object.keys(documented.listeners!.properties!).sort());
  });
});
