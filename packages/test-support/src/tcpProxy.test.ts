import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { postgresForTests } from './postgres.js';
import { startTcpProxy } from './tcpProxy.js';

/** An echo server standing in for the proxied service. */
async function echoServer() {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as { port: number }).port };
}

/** Connects, sends `text`, and resolves with the echo; rejects when the connection is refused. */
async function roundTrip(port: number, text: string): Promise<{ echo: string; socket: Socket }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(text);
  const [data] = await once(socket, 'data');
  return { echo: String(data), socket };
}

const postgres = await postgresForTests(import.meta.url);

describe('startTcpProxy', () => {
  test('forwards both ways; pause drops open connections and refuses new ones until resume', async () => {
    const echo = await echoServer();
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: echo.port });
    after(() => proxy.close());
    const first = await roundTrip(proxy.port, 'hello');
    assert.equal(first.echo, 'hello');
    const closed = once(first.socket, 'close');
    await proxy.pause();
    await closed;
    assert.equal(proxy.paused, true);
    await assert.rejects(roundTrip(proxy.port, 'nobody home'), /ECONNREFUSED/);
    await proxy.resume();
    const second = await roundTrip(proxy.port, 'back');
    assert.equal(second.echo, 'back');
    second.socket.destroy();
    assert.equal(proxy.accepted, 2);
    assert.equal(proxy.rewrite('postgres://u@db.example:5432/x?options=y'), `postgres://u@127.0.0.1:${proxy.port}/x?options=y`);
  });

  test('stall: open connections go silent without closing; new ones still work', async () => {
    const echo = await echoServer();
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: echo.port });
    after(() => proxy.close());
    const open = await roundTrip(proxy.port, 'before');
    proxy.stall();
    let heard = '';
    let closed = false;
    open.socket.on('data', (data) => (heard += String(data)));
    open.socket.once('close', () => (closed = true));
    open.socket.write('into the void');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual([heard, closed], ['', false], 'no echo, and no close');
    const fresh = await roundTrip(proxy.port, 'fresh');
    assert.equal(fresh.echo, 'fresh');
    fresh.socket.destroy();
    const ended = once(open.socket, 'close');
    await proxy.close();
    await ended;
  });

  test('in front of PostgreSQL: a pause ends the session, and a new one works after resume', { skip: postgres.skip }, async () => {
    if (!postgres.available) return;
    const server = new URL(postgres.serverUrl);
    const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    after(() => proxy.close());
    const client = new pg.Client({ connectionString: proxy.rewrite(postgres.url) });
    client.on('error', () => undefined); // the drop below is the point of the test
    await client.connect();
    assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1);
    // Not events.once: it would reject on the 'error' that precedes 'end'.
    const ended = new Promise((resolve) => client.once('end', resolve));
    await proxy.pause();
    await ended;
    await proxy.resume();
    const again = new pg.Client({ connectionString: proxy.rewrite(postgres.url) });
    await again.connect();
    assert.equal((await again.query('SELECT 2 AS two')).rows[0].two, 2);
    await again.end();
  });
});
