import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { eventually, postgresForTests, sqlOnce, startTcpProxy } from '@switchyard/test-support';
import { PgListener } from './pgListener.js';

const postgres = await postgresForTests(import.meta.url);
const channel = `listener_test_${randomBytes(6).toString('hex')}`;

if (!postgres.available) {
  test('PgListener', { skip: postgres.skip }, () => {});
} else {
  const target = new URL(postgres.serverUrl);
  // Stalls its connections (a network that silently stops delivering), or goes down and refuses them (a restart).
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  after(() => proxy.close());

  const start = (heard: string[], reconnected: { count: number }, errors: Error[] = []) =>
    PgListener.start({
      connection: proxy.rewrite(postgres.url),
      channels: [channel],
      applicationName: 'pg-listener-test',
      onNotification: (_channel, payload) => heard.push(payload),
      onReconnect: () => {
        reconnected.count++;
      },
      onError: (error) => errors.push(error),
      backoff: { initialMs: 20, maxMs: 100 },
      pingIntervalMs: 100,
      // Long enough that a healthy connection's answer, late on a loaded machine (or behind a busy event loop,
      // where the timer is run before the answer is read), is never taken for a dead one: a needless reconnect
      // would break the counts below. A stalled connection is still found within about 2 s.
      pingTimeoutMs: 2_000,
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
      await proxy.pause();
      await eventually('several failed attempts', () => errors.length >= 4);
      assert.equal(listener.connected, false);
      assert.equal(reconnected.count, 0);
      await proxy.resume();
      await eventually('the reconnection', () => reconnected.count === 1 && listener.connected);
      await sqlOnce(postgres.url, 'SELECT pg_notify($1, $2)', [channel, 'back']);
      await eventually('a notification after the outage', () => heard.includes('back'));
    } finally {
      await proxy.resume();
      await listener.close();
    }
  });

  test('a first connection that fails rejects start(), and close() stops retrying', async () => {
    await proxy.pause();
    try {
      await assert.rejects(start([], { count: 0 }), { code: 'store_failed' });
    } finally {
      await proxy.resume();
    }
    const errors: Error[] = [];
    const listener = await start([], { count: 0 }, errors);
    await proxy.pause();
    await eventually('the drop', () => !listener.connected);
    await listener.close();
    await proxy.resume();
    const seen = errors.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(errors.length, seen, 'no attempts after close');
    assert.equal(listener.connected, false);
  });
}
