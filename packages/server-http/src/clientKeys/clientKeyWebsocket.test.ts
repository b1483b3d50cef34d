/**
 * A runtime key's limits over the Responses websocket, on a fake clock: every `response.create` on a
 * socket opened with a runtime key is checked against the key's models, rates and budget, as
 * `POST /v1/responses` is. A refusal is the Responses websocket's error event (`status` and OpenAI's
 * `error` object with the stable code), nothing reaches the relay, and the socket stays usable; a key
 * revoked or expired while the socket is open is refused and the socket closed (1008).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { Relay, UndiciTransport } from '@switchyard/relay';
import { FakeScheduler } from '@switchyard/runtime';
import { type Message, open, type TestSocket } from '../../test/wsClient.js';
import { createDataPlane } from '../dataPlane/dataPlane.js';
import { createWebsocketGateway } from '../dataPlane/websocket/websocketGateway.js';
import { ClientKeyGuard } from './clientKeyGuard.js';
import { CreateClientKeySchema, createRecord } from './clientKeyRecord.js';
import { LocalBudgetLedger, MemoryClientKeyStore } from './clientKeyStore.js';

const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
after(() => transport.close());

async function socketPlane(startMs: number) {
  const clock = new FakeScheduler(startMs);
  const guard = await ClientKeyGuard.open({ store: new MemoryClientKeyStore(), ledger: new LocalBudgetLedger(), clock });
  const relay = new Relay({ providers: [{ name: 'demo', kind: 'mock', models: ['demo-model', 'other-model'] }], transport });
  let relayed = 0;
  relay.events.on('request:start', () => relayed++);
  const dataPlane = createDataPlane({ relay, apiKeys: ['sk-static-ws'], clientKeys: guard });
  const websocket = createWebsocketGateway({
    relay,
    credentials: undefined as never,
    acceptsClientKey: (key) => dataPlane.acceptsClientKey(key),
    clientOf: (key) => dataPlane.clientOf(key),
    clientKeys: guard,
    management: { authorize: () => ({ ok: false, code: 'not_found', message: 'off' }), matches: () => false },
    // No keepalive within the test: the fake clock moves by minutes and days.
    settings: () => ({ pingIntervalMs: 7 * 86_400_000 }),
    scheduler: clock,
  });
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket, head) => websocket.handleUpgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(async () => {
    await websocket.close({ graceMs: 0 });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/responses`;
  const addKey = (body: Record<string, unknown>) => {
    const { record, secret } = createRecord(CreateClientKeySchema.parse({ name: 'ws', ...body }), clock.now());
    guard.apply(record);
    return { record, secret };
  };
  const connect = (secret: string) => open(url, { authorization: `Bearer ${secret}` });
  return { clock, guard, addKey, connect, relayed: () => relayed };
}

let requests = 0;
/** Sends a `response.create` and resolves with its last message: `response.completed` or an `error`. */
async function create(socket: TestSocket, fields: Record<string, unknown> = {}): Promise<Message> {
  const requestId = `req-${++requests}`;
  socket.send({ type: 'response.create', request_id: requestId, model: 'demo-model', input: 'hello there', ...fields });
  return socket.next((m) => m.request_id === requestId && (m.type === 'response.completed' || m.type === 'error'));
}

/** The parts of an error event a client reads. */
const refusal = (message: Message) => ({
  type: message.type,
  status: message.status,
  code: message.error?.code,
  param: message.error?.param,
});

describe('response.create over a websocket is held to the key', () => {
  test('a model outside the list is refused (403 model_not_allowed), warm-ups too; the socket stays usable', async () => {
    const { addKey, connect, relayed } = await socketPlane(Date.UTC(2026, 0, 1));
    const { secret } = addKey({ models: ['demo-*'] });
    const socket = await connect(secret);
    const before = relayed();
    const refused = await create(socket, { model: 'other-model' });
    assert.deepEqual(refusal(refused), { type: 'error', status: 403, code: 'model_not_allowed', param: 'model' });
    assert.equal(refused.error.type, 'permission_error');
    assert.deepEqual(refusal(await create(socket, { model: 'other-model', generate: false })), refusal(refused));
    assert.equal(relayed(), before, 'nothing reached the relay');
    assert.equal((await create(socket)).type, 'response.completed', 'a model the glob allows is served on the same socket');
    socket.ws.close();
  });

  test('over its request rate: 429 key_rate_limited, until the rate allows the next one', async () => {
    const { clock, addKey, connect, relayed } = await socketPlane(Date.UTC(2026, 0, 1));
    const { secret } = addKey({ requests_per_minute: 2 });
    const socket = await connect(secret);
    assert.equal((await create(socket)).type, 'response.completed');
    assert.equal((await create(socket)).type, 'response.completed');
    const before = relayed();
    const refused = await create(socket);
    assert.deepEqual(refusal(refused), { type: 'error', status: 429, code: 'key_rate_limited', param: null });
    assert.match(refused.error.message, /retry in 30 s/);
    assert.equal(relayed(), before);
    await clock.advance(30_000);
    assert.equal((await create(socket)).type, 'response.completed', 'the same socket, once the rate has room');
    socket.ws.close();
  });

  test('a budget counts what the socket’s responses used, and refuses until the UTC day ends', async () => {
    const { clock, addKey, connect } = await socketPlane(Date.UTC(2026, 10, 28, 23, 59, 0));
    // Three tokens: the first answer (the mock's reply alone is longer) spends past them when it settles.
    const { secret } = addKey({ budget: { limit: 3, unit: 'tokens', period: 'daily' } });
    const socket = await connect(secret);
    assert.equal((await create(socket)).type, 'response.completed');
    const refused = await create(socket);
    assert.deepEqual(refusal(refused), { type: 'error', status: 429, code: 'key_budget_exceeded', param: null });
    assert.match(refused.error.message, /resets at 2026-11-29T00:00:00\.000Z/);
    await clock.advance(60_000);
    assert.equal((await create(socket)).type, 'response.completed', 'a new day, a new budget');
    socket.ws.close();
  });

  test('a key revoked while its socket is open: the next response.create is refused (401) and the socket closed (1008)', async () => {
    const { clock, guard, addKey, connect, relayed } = await socketPlane(Date.UTC(2026, 0, 1));
    const { record, secret } = addKey({});
    const socket = await connect(secret);
    assert.equal((await create(socket)).type, 'response.completed');
    const at = new Date(clock.now()).toISOString();
    guard.apply({ ...record, revoked: true, revoked_at: at, updated_at: at });
    const before = relayed();
    assert.deepEqual(refusal(await create(socket)), { type: 'error', status: 401, code: 'invalid_api_key', param: null });
    assert.equal(await socket.closed, 1008);
    assert.equal(relayed(), before);
  });

  test('a key that expires while its socket is open: 401 key_expired, and the socket closed', async () => {
    const { clock, addKey, connect } = await socketPlane(Date.UTC(2026, 0, 1));
    const { secret } = addKey({ expires_at: new Date(Date.UTC(2026, 0, 1, 0, 1)).toISOString() });
    const socket = await connect(secret);
    assert.equal((await create(socket)).type, 'response.completed');
    await clock.advance(60_000);
    assert.deepEqual(refusal(await create(socket)), { type: 'error', status: 401, code: 'key_expired', param: null });
    assert.equal(await socket.closed, 1008);
  });

  test('a static key on the same gateway is not held to any runtime key’s limits', async () => {
    const { addKey, connect } = await socketPlane(Date.UTC(2026, 0, 1));
    addKey({ models: ['nothing-*'], requests_per_minute: 1 });
    const socket = await connect('sk-static-ws');
    for (let i = 0; i < 3; i++) assert.equal((await create(socket, { model: 'other-model' })).type, 'response.completed');
    socket.ws.close();
  });
});
