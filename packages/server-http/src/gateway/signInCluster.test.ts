/**
 * Device sign-ins in a cluster: two gateways on one PostgreSQL schema, as
 * if behind a load balancer. A sign-in started on node A is polled and
 * cancelled through node B; a node that stops (or crashed and restarts)
 * leaves its pending sign-ins answered as interrupted, never 404.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { PostgresSignInDirectory } from '@switchyard/credentials/postgres';
import { eventually, postgresForTests } from '@switchyard/test-support';
import pg from 'pg';
import { signInProviders, startFakeAuth } from '../../test/signInFixture.js';
import { startClusterNode, testCluster } from '../../test/startClusterNode.js';
import type { Gateway } from './gateway.js';

const postgres = await postgresForTests(import.meta.url);
const KEY = 'signin-cluster-key';
const CLIENT_SECRET = 'hush-cluster-client-secret';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are probed field by field
type Body = Record<string, any>;

describe('device sign-ins across the nodes of a cluster', { skip: postgres.skip }, async () => {
  if (!postgres.available) return;
  const auth = await startFakeAuth();
  after(() => auth.stop());

  const cluster = testCluster(postgres.url);
  const startNode = (nodeId: string): Promise<Gateway> =>
    startClusterNode(
      cluster,
      nodeId,
      `
port: 0
remote-management: { secret-key: ${KEY} }
auth: { encryption: { enabled: true, key: '${cluster.encryptionKey}' }, refresh: { enabled: false } }
providers:
${signInProviders(auth, { acmeClientSecret: CLIENT_SECRET })}metrics: { enabled: false }
`,
    );

  async function call(gateway: Gateway, method: string, path: string): Promise<{ status: number; body: Body }> {
    const response = await fetch(`${gateway.url}${path}`, { method, headers: { authorization: `Bearer ${KEY}` } });
    return { status: response.status, body: (await response.json()) as Body };
  }

  const a = await startNode('node-a');
  const b = await startNode('node-b');

  test('started on A, polled on B: pending, then succeeded with the credential id; the table holds no secret', async () => {
    auth.script = ['await_user'];
    const started = await call(a, 'POST', '/v0/oauth/acme/sessions');
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const id = started.body.session_id as string;

    const pending = await call(b, 'GET', `/v0/oauth/sessions/${id}`);
    assert.equal(pending.status, 200, JSON.stringify(pending.body));
    assert.deepEqual(pending.body, { session_id: id, flow: 'acme', status: 'pending', expires_at: started.body.expires_at });

    auth.approve(started.body.user_code);
    await eventually('B to see the success', async () => (await call(b, 'GET', `/v0/oauth/sessions/${id}`)).body.status === 'succeeded');
    const done = (await call(b, 'GET', `/v0/oauth/sessions/${id}`)).body;
    assert.equal(typeof done.credential_id, 'string');
    assert.deepEqual(done, (await call(a, 'GET', `/v0/oauth/sessions/${id}`)).body, 'both nodes give one answer');

    // What the sign-in polled with and got must never reach the shared table.
    const deviceCodes = auth.calls('/rfc/token').map((r) => r.body.device_code);
    assert.ok(deviceCodes.length > 0);
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT row_to_json(s)::text AS row FROM switchyard_sign_ins s WHERE id = $1', [id]);
      assert.equal(rows.length, 1);
      const row = rows[0].row as string;
      for (const secret of [...deviceCodes, CLIENT_SECRET]) assert.ok(!row.includes(secret!), 'no secret in the row');
      assert.match(row, /"node_id":"node-a"/);
    } finally {
      await client.end();
    }
  });

  test("cancelled on B: A's flow is aborted and both nodes answer failed (cancelled)", async () => {
    auth.script = ['await_user'];
    const started = await call(a, 'POST', '/v0/oauth/acme/sessions');
    const id = started.body.session_id as string;

    const cancelled = await call(b, 'DELETE', `/v0/oauth/sessions/${id}`);
    assert.equal(cancelled.status, 200);
    assert.deepEqual([cancelled.body.status, cancelled.body.error?.code], ['failed', 'cancelled']);
    assert.equal(a.credentials.manager.signIns.get(id).state, 'cancelled', "A's own session ended");
    const pollsAtCancel = auth.calls('/rfc/token').length;
    for (const node of [a, b]) {
      const seen = (await call(node, 'GET', `/v0/oauth/sessions/${id}`)).body;
      assert.deepEqual([seen.status, seen.error?.code], ['failed', 'cancelled']);
    }
    // A stopped polling the authorization server: approving now changes nothing.
    auth.approve(started.body.user_code);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(auth.calls('/rfc/token').length, pollsAtCancel, 'no poll after the cancel');
    assert.equal((await call(b, 'GET', `/v0/oauth/sessions/${id}`)).body.status, 'failed');
  });

  test('a node that crashed answers its leftover sign-ins as interrupted once it is back; one that stops, at once', async () => {
    // What a crash leaves behind: a row still pending, owned by a node that no longer polls for it.
    const directory = await PostgresSignInDirectory.open({ connection: postgres.url, listen: false });
    after(() => directory.close());
    const leftover = {
      id: randomBytes(16).toString('base64url'),
      flow: 'acme',
      state: 'pending' as const,
      prompt: {
        user_code: 'ABCD-EFGH',
        verification_uri: `${auth.url}/verify`,
        verification_uri_complete: null,
        expires_at: new Date(Date.now() + 600_000).toISOString(),
        interval_ms: 50,
      },
      started_at: new Date().toISOString(),
      finished_at: null,
      credential_id: null,
      error: null,
      node_id: 'node-c',
      forget_at: new Date(Date.now() + 1_200_000).toISOString(),
    };
    await directory.put(leftover);
    assert.equal((await call(b, 'GET', `/v0/oauth/sessions/${leftover.id}`)).body.status, 'pending');
    const c = await startNode('node-c');
    const after1 = (await call(b, 'GET', `/v0/oauth/sessions/${leftover.id}`)).body;
    assert.deepEqual([after1.status, after1.error?.code], ['failed', 'interrupted']);

    // A graceful stop with a sign-in pending.
    auth.script = ['await_user'];
    const started = await call(c, 'POST', '/v0/oauth/acme/sessions');
    const id = started.body.session_id as string;
    assert.equal((await call(b, 'GET', `/v0/oauth/sessions/${id}`)).body.status, 'pending');
    await c.close();
    const stopped = await call(b, 'GET', `/v0/oauth/sessions/${id}`);
    assert.equal(stopped.status, 200);
    assert.deepEqual([stopped.body.status, stopped.body.error?.code], ['failed', 'interrupted']);
  });

  test('an id no node knows is 404 session_not_found on every node, for GET and DELETE', async () => {
    for (const node of [a, b]) {
      for (const method of ['GET', 'DELETE']) {
        const answer = await call(node, method, '/v0/oauth/sessions/no-such-session');
        assert.equal(answer.status, 404);
        assert.equal(answer.body.error.code, 'session_not_found');
      }
    }
  });
});
