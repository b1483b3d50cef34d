/**
 * Slow and idle clients cannot hold the gateway's sockets without bound: `server.http.max_connections`
 * caps the client connections open at once, and `server.http.request_timeout` bounds the time a
 * client takes to send its request (a trickled body is answered 408).
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';

const lines: string[] = [];
const { gateway } = await startTestGateway(
  `
port: 0
api-keys: [sk-client]
providers:
  demo: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
server:
  http: { max_connections: 2, request_timeout: 400ms }
`,
  { logDestination: { write: (line: string) => void lines.push(line) } },
);
const url = new URL(gateway.url);
const clients = new Set<Socket>();
after(async () => {
  for (const socket of clients) socket.destroy();
});

/** A raw client connection, open once connected. */
async function open(): Promise<Socket> {
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  clients.add(socket);
  socket.on('error', () => undefined);
  socket.setEncoding('latin1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return socket;
}

/** What the server sent on `socket` until it closed it. */
function closedWith(socket: Socket): Promise<string> {
  let received = '';
  socket.on('data', (chunk: string) => {
    received += chunk;
  });
  return new Promise((resolve) => socket.once('close', () => resolve(received)));
}

const connections = () => new Promise<number>((resolve, reject) => gateway.server.getConnections((e, n) => (e ? reject(e) : resolve(n))));

const HEALTH = `GET /v1/models HTTP/1.1\r\nhost: gateway\r\nauthorization: Bearer sk-client\r\nconnection: close\r\n\r\n`;

test('with the cap at 2, a third connection is closed while two are open, and served once one closes', async () => {
  const first = await open();
  const second = await open();
  await eventually('the gateway to hold both connections', async () => (await connections()) === 2);
  const third = await open();
  const refused = closedWith(third);
  third.write(HEALTH);
  assert.equal(await refused, '', 'the third connection was closed without an answer');

  first.destroy();
  await eventually('the gateway to let the first connection go', async () => (await connections()) === 1);
  const fourth = await open();
  const answered = closedWith(fourth);
  fourth.write(HEALTH);
  assert.match(await answered, /^HTTP\/1\.1 200 /);
  second.destroy();
});

test('a body trickled past the request timeout is answered 408', async () => {
  await eventually('earlier connections to close', async () => (await connections()) === 0);
  const socket = await open();
  const answer = closedWith(socket);
  const body = JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: 'hello' }] });
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: gateway\r\nauthorization: Bearer sk-client\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
  );
  // One byte every 100 ms: the body would take far longer than the 400 ms allowed.
  let sent = 0;
  const trickle = setInterval(() => {
    if (socket.destroyed || sent >= body.length - 1) return;
    socket.write(body[sent++]!);
  }, 100);
  try {
    assert.match(await answer, /^HTTP\/1\.1 408 /);
    assert.ok(sent < body.length, 'the body never completed');
    // A client's slowness is no error of the gateway's: nothing a client could flood the log with.
    assert.deepEqual(
      lines.filter((line) => /"level":"(error|warn)"/.test(line)),
      [],
    );
  } finally {
    clearInterval(trickle);
  }
});
