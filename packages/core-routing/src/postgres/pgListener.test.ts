import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { after, test } from 'node:test';
import { eventually, postgresForTests, sqlOnce } from '@switchyard/test-support';
import { PgListener } from './pgListener.js';

const postgres = await postgresForTests(import.meta.url);
const channel = `listener_test_${randomBytes(6).toString('hex')}`;

/**
 * A TCP relay on 127.0.0.1 in front of PostgreSQL that can stall its
 * connections (a network that silently stops delivering) or go down and
 * refuse connections (a server restart).
 */
async function relay(target: URL) {
  const pairs = new Set<[Socket, Socket]>();
  /** Every socket ever opened, so close() can end stalled ones (a paused socket never sees its peer leave). */
  const sockets = new Set<Socket>();
  let mode: 'up' | 'down' = 'up';
  const server: Server = createServer((inbound) => {
    if (mode === 'down') return void inbound.destroy();
    const outbound = tcpConnect(Number(target.port || 5432), target.hostname);
    const pair: [Socket, Socket] = [inbound, outbound];
    pairs.add(pair);
    sockets.add(inbound).add(outbound);
    inbound.pipe(outbound).pipe(inbound);
    const drop = () => {
      pairs.delete(pair);
      sockets.delete(inbound);
      sockets.delete(outbound);
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    /** Existing connections stop carrying bytes, without closing. */
    stall() {
      for (const [inbound, outbound] of pairs) {
        inbound.unpipe();
        outbound.unpipe();
        inbound.pause();
        outbound.pause();
      }
      pairs.clear();
    },
    /** Every connection is cut and new ones are refused until `up()`. */
    down() {
      mode = 'down';
      for (const [inbound, outbound] of pairs) {
        inbound.destroy();
        outbound.destroy();
      }
    },
    up() {
      mode = 'up';
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (!postgres.available) {
  test('PgListener', { skip: postgres.skip }, () => {});
} else {
  const target = new URL(postgres.serverUrl);
  const proxy = await relay(target);
  after(() => proxy.close());
  const viaProxy = new URL(postgres.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);

  const start = (heard: string[], reconnected: { count: number }, errors: Error[] = []) =>
    PgListener.start({
      connection: viaProxy.toString(),
      channels: [channel],
      applicationName: 'pg-listener-test',
      onNotification: (_channel, payload) => heard.push(payload),
      onReconnect: () => {
        reconnected.count++;
      },
      onError: (error) => errors.push(error),
      backoff: { initialMs: 20, maxMs: 100 },
      pingIntervalMs: 100,
      pingTimeoutMs: 200,
    });

  test('a connection that silently stops answering is found by the ping and replaced', async () => {
    const heard: string[] = [];
    const reconnected = { count: 0 };
    const errors: Error[] = [];
    const listener = await start(heard, reconnected, errors);
    try {
      await sqlOnce(postgres.url, 'SELECT pg_notify($1, $2)', [channel, 'before']);
      await eventually('the first notification', () => heard.includes('before'));
      proxy.stall();
      await eventually('the reconnection', () => reconnected.count === 1 && listener.connected);
      assert.ok(errors.some((e) => /ping/.test(e.message)));
      await sqlOnce(postgres.url, 'SELECT pg_notify($1, $2)', [channel, 'after']);
      await eventually('a notification on the new connection', () => heard.includes('after'));
      assert.equal(listener.reconnects, 1);
    } finally {
      await listener.close();
    }
  });

  test('while the server is down it keeps retrying with backoff, and comes back when the server does', async () => {
    const heard: string[] = [];
    const reconnected = { count: 0 };
    const errors: Error[] = [];
    const listener = await start(heard, reconnected, errors);
    try {
      proxy.down();
      await eventually('several failed attempts', () => errors.length >= 4);
      assert.equal(listener.connected, false);
      assert.equal(reconnected.count, 0);
      proxy.up();
      await eventually('the reconnection', () => reconnected.count === 1 && listener.connected);
      await sqlOnce(postgres.url, 'SELECT pg_notify($1, $2)', [channel, 'back']);
      await eventually('a notification after the outage', () => heard.includes('back'));
    } finally {
      proxy.up();
      await listener.close();
    }
  });

  test('a first connection that fails rejects start(), and close() stops retrying', async () => {
    proxy.down();
    try {
      await assert.rejects(start([], { count: 0 }), { code: 'store_failed' });
    } finally {
      proxy.up();
    }
    const errors: Error[] = [];
    const listener = await start([], { count: 0 }, errors);
    proxy.down();
    await eventually('the drop', () => !listener.connected);
    await listener.close();
    proxy.up();
    const seen = errors.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(errors.length, seen, 'no attempts after close');
    assert.equal(listener.connected, false);
  });
}
