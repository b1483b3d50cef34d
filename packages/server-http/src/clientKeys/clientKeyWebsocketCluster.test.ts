/**
 * A runtime key's request budget over the Responses websocket in a cluster of two gateway nodes
 * sharing one PostgreSQL: each `response.create` is admitted by the cluster's ledger (a database
 * reservation, answered asynchronously, unlike the single node's in-memory ledger of
 * clientKeyWebsocket.test.ts). A budget of N admits exactly N messages, one after another on one
 * socket or all at once over sockets on both nodes; the rest get the client-key refusal (the error
 * event with 429 `key_budget_exceeded`) and the socket stays open. Skipped, with a message, where
 * PostgreSQL is not reachable.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually, postgresForTests, sqlOnce } from '@switchyard/test-support';
import { startClusterNodes, testCluster } from '../../test/startClusterNode.js';
import { type Message, open, type TestSocket } from '../../test/wsClient.js';
import type { Gateway } from '../gateway/gateway.js';

const postgres = await postgresForTests(import.meta.url);
// biome-ignore lint/suspicious/noExplicitAny: the tests read the API's JSON freely; the routes' schemas type it
type Json = Record<string, any>;
const MANAGEMENT_KEY = 'client-keys-ws-cluster-key';

async function createKey(gateway: Gateway, body: Record<string, unknown>): Promise<{ secret: string; id: string }> {
  const response = await fetch(`${gateway.url}/v0/management/client-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${MANAGEMENT_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const created = (await response.json()) as Json;
  assert.equal(response.status, 201, JSON.stringify(created));
  return { secret: created.secret, id: created.key.id };
}

const connect = (gateway: Gateway, secret: string) =>
  open(`${gateway.url.replace(/^http/, 'ws')}/v1/responses`, { authorization: `Bearer ${secret}` });

let requests = 0;
const isFinal = (m: Message) => m.type === 'response.completed' || m.type === 'error';

/** Sends a `response.create`; returns its request id. */
function send(socket: TestSocket): string {
  const requestId = `req-${++requests}`;
  socket.send({ type: 'response.create', request_id: requestId, model: 'acme-model', input: 'hello there' });
  return requestId;
}

/** Sends a `response.create`; resolves with its last message: `response.completed` or an `error`. */
function create(socket: TestSocket): Promise<Message> {
  const requestId = send(socket);
  return socket.next((m) => m.request_id === requestId && isFinal(m), 15_000);
}

/** The parts of an error event a client reads. */
const refusal = (message: Message) => ({
  type: message.type,
  status: message.status,
  code: message.error?.code,
  param: message.error?.param,
});
const BUDGET_REFUSAL = { type: 'error', status: 429, code: 'key_budget_exceeded', param: null };

/** What the cluster's ledger holds for the key: used, and reservations not yet settled. */
async function ledger(databaseUrl: string, id: string): Promise<{ used: number; open: number }> {
  const used = await sqlOnce(databaseUrl, 'SELECT used FROM switchyard_client_key_budgets WHERE id = $1', [id]);
  const reservations = await sqlOnce(databaseUrl, 'SELECT count(*) AS open FROM switchyard_client_key_reservations WHERE id = $1', [id]);
  return { used: Number(used.rows[0]?.used ?? 0), open: Number(reservations.rows[0]?.open) };
}

describe('client keys over websockets in a cluster of two', { skip: postgres.skip }, async () => {
  if (!postgres.available) return;
  const cluster = testCluster(postgres.url);
  const nodes = (await startClusterNodes(cluster, 2, {
    port: 0,
    'remote-management': { 'secret-key': MANAGEMENT_KEY },
    auth: { encryption: { enabled: true, key: cluster.encryptionKey }, refresh: { enabled: false } },
    providers: { acme: { kind: 'mock', models: ['acme-model'] } },
    metrics: { enabled: false },
  })) as [Gateway, Gateway];
  const [a, b] = nodes;
  const known = (id: string) =>
    eventually('every node to know the key', () => nodes.every((n) => n.clientKeys.get(id) !== undefined), 5_000);

  test('a budget of 3 requests on one socket: exactly 3 response.create are answered, the 4th is refused and the socket stays open', async () => {
    const { secret, id } = await createKey(a, { name: 'ws-budget-3', budget: { limit: 3, unit: 'requests', period: 'monthly' } });
    await known(id);
    // On the node that did not create the key: the budget is the cluster's, not a node's.
    const socket = await connect(b, secret);
    for (let i = 1; i <= 3; i++) assert.equal((await create(socket)).type, 'response.completed', `message ${i} is admitted`);
    const refused = await create(socket);
    assert.deepEqual(refusal(refused), BUDGET_REFUSAL);
    assert.match(refused.error.message, /budget/);
    assert.equal(refused.error.type, 'rate_limit_error');
    assert.deepEqual(refusal(await create(socket)), BUDGET_REFUSAL, 'the socket is still served, and still refused');
    assert.equal(socket.ws.readyState, socket.ws.OPEN);
    await eventually('the ledger to settle at 3', async () => (await ledger(postgres.url, id)).used === 3, 5_000);
    assert.equal((await ledger(postgres.url, id)).open, 0, 'every reservation settled');
    socket.ws.close();
  });

  test('a budget of 4, six messages at once over sockets on both nodes: exactly 4 are answered and 2 refused', async () => {
    const { secret, id } = await createKey(b, { name: 'ws-budget-4', budget: { limit: 4, unit: 'requests', period: 'monthly' } });
    await known(id);
    const sockets = [await connect(a, secret), await connect(b, secret)];
    // Sent without waiting for answers: the admissions race in the database, as they would from busy clients.
    const sent = sockets.map((socket) => [send(socket), send(socket), send(socket)]);
    const finals = () => sockets.flatMap((socket, i) => socket.received.filter((m) => isFinal(m) && sent[i]!.includes(m.request_id)));
    await eventually('every message to be answered', () => finals().length === 6, 15_000);
    const answers = finals();
    const completed = answers.filter((m) => m.type === 'response.completed').length;
    const refusals = answers.filter((m) => m.type === 'error').map(refusal);
    assert.deepEqual({ completed, refusals }, { completed: 4, refusals: [BUDGET_REFUSAL, BUDGET_REFUSAL] });
    await eventually('the ledger to settle at 4', async () => (await ledger(postgres.url, id)).used === 4, 5_000);
    assert.equal((await ledger(postgres.url, id)).open, 0, 'every reservation settled');
    for (const socket of sockets) socket.ws.close();
  });
});
