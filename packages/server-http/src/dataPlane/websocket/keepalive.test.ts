import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { eventually, open } from '../../../test/wsClient.js';
import { createWebsocketGateway } from './websocketGateway.js';

// The keepalive alone: no relay or credentials are reached by pings.
const scheduler = new FakeScheduler(Date.parse('2026-03-01T00:00:00Z'));
const websocket = createWebsocketGateway({
  relay: undefined as never,
  credentials: undefined as never,
  acceptsClientKey: () => true,
  management: { authorize: () => ({ ok: false, code: 'not_found', message: 'off' }), matches: () => false },
  settings: () => ({ pingIntervalMs: 30_000 }),
  scheduler,
});
const server = createServer((_req, res) => res.writeHead(404).end());
server.on('upgrade', (req, socket, head) => websocket.handleUpgrade(req, socket, head));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/ws`;
after(async () => {
  await websocket.close({ graceMs: 0 });
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('the keepalive pings every socket and drops the one that never answers', async () => {
  const answering = await open(url);
  const silent = await open(url, {}, { autoPong: false });
  let pings = 0;
  answering.ws.on('ping', () => pings++);
  await scheduler.advance(30_000);
  await eventually(() => pings === 1, 5000, 'the first ping');
  // A round trip on the answering socket: its pong, sent before this message, has reached the gateway.
  answering.send('not json');
  assert.equal((await answering.next()).error.code, 'invalid_json');
  await scheduler.advance(30_000);
  assert.equal(await silent.closed, 1006, 'terminated without a closing handshake');
  await eventually(() => pings === 2, 5000, 'the second ping');
  assert.equal(websocket.connections, 1);
  answering.ws.close();
  await answering.closed;
});

test('a client message counts as a sign of life too', async () => {
  const chatty = await open(url, {}, { autoPong: false });
  await scheduler.advance(30_000);
  chatty.send('{}');
  assert.equal((await chatty.next()).error.code, 'invalid_message');
  await scheduler.advance(30_000);
  chatty.send('{}');
  assert.equal((await chatty.next()).error.code, 'invalid_message', 'still open after a second ping');
  chatty.ws.close();
  assert.equal(await chatty.closed, 1005);
});
