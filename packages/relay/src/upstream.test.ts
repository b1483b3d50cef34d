import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { eventually, stagedLookup } from '@switchyard/test-support';
import { classifyTransportError, UndiciTransport } from './upstream.js';

// An upstream that answers at once, except the bodies saying "hold", which wait until released.
let received = 0;
const held: ServerResponse[] = [];
let abandoned = 0;
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    received++;
    res.on('close', () => {
      if (!res.writableFinished) abandoned++;
    });
    if (body === 'hold') held.push(res);
    else res.writeHead(200, { 'content-type': 'text/plain' }).end(`echo ${body}`);
  });
});
let connections = 0;
server.on('connection', () => connections++);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`;
const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
after(async () => {
  await transport.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const send = (body: string, signal?: AbortSignal) =>
  transport.send({ url, method: 'POST', headers: { 'content-type': 'text/plain' }, body }, signal ? { signal } : {});

async function text(response: Awaited<ReturnType<typeof send>>): Promise<string> {
  let out = '';
  for await (const chunk of response.body) out += Buffer.from(chunk).toString('utf8');
  return out;
}

test('requests sharing one signal each complete, and leave at most one listener on it', async () => {
  const controller = new AbortController();
  for (let i = 0; i < 25; i++) assert.equal(await text(await send(`n${i}`, controller.signal)), `echo n${i}`);
  assert.ok(getEventListeners(controller.signal, 'abort').length <= 1);
});

test('aborting a shared signal aborts the request in flight, waiting for its answer', async () => {
  const controller = new AbortController();
  assert.equal(await text(await send('before', controller.signal)), 'echo before');
  const before = abandoned;
  const pending = send('hold', controller.signal);
  await eventually('the held request to reach the upstream', () => held.length === 1);
  controller.abort();
  await assert.rejects(pending, { name: 'AbortError' });
  await eventually('the upstream to see the request abandoned', () => abandoned === before + 1);
  held.splice(0);
});

test('aborting a shared signal mid-body ends that body with an error', async () => {
  const controller = new AbortController();
  // The answer's headers are in, its body is not done when the signal aborts.
  const streaming = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first ');
  });
  await new Promise<void>((resolve) => streaming.listen(0, '127.0.0.1', resolve));
  try {
    const open = await transport.send(
      { url: `http://127.0.0.1:${(streaming.address() as AddressInfo).port}/`, method: 'GET', headers: {} },
      { signal: controller.signal },
    );
    const reading = text(open);
    setTimeout(() => controller.abort(), 20);
    await assert.rejects(reading, { name: 'AbortError' });
  } finally {
    streaming.closeAllConnections();
    await new Promise((resolve) => streaming.close(resolve));
  }
});

test('a signal aborted before the request never reaches the upstream', async () => {
  const before = received;
  await assert.rejects(send('never', AbortSignal.abort()), { name: 'AbortError' });
  // A request after it, on the same pool, still goes through.
  assert.equal(await text(await send('after')), 'echo after');
  assert.equal(received, before + 1);
});

// `localhost` stands for a name: were the injected lookup ignored, it would still resolve locally, never through the network.
test('an injected lookup resolves each new connection, not each request', async () => {
  const { lookup, asked } = stagedLookup(() => '127.0.0.1');
  const named = new UndiciTransport({ requestTimeoutMs: 5_000 }, { lookup });
  try {
    const target = url.replace('127.0.0.1', 'localhost');
    const connectionsBefore = connections;
    for (let i = 0; i < 20; i++) {
      const response = await named.send({ url: target, method: 'POST', headers: { 'content-type': 'text/plain' }, body: `n${i}` }, {});
      assert.equal(await text(response), `echo n${i}`);
    }
    assert.ok(asked.length > 0 && asked.every((host) => host === 'localhost'));
    assert.equal(asked.length, connections - connectionsBefore, 'one lookup per connection opened');
    assert.ok(asked.length < 20, `pooled connections are reused without another lookup (${asked.length} lookups)`);
  } finally {
    await named.close();
  }
});

test('a lookup that refuses the host fails the request before anything reaches the upstream', async () => {
  const refusal = Object.assign(new Error('refusing to connect to localhost'), { code: 'SSRF_BLOCKED' });
  const { lookup } = stagedLookup(() => refusal);
  const guarded = new UndiciTransport({ requestTimeoutMs: 5_000 }, { lookup });
  const before = received;
  try {
    const target = url.replace('127.0.0.1', 'localhost');
    const error = await guarded.send({ url: target, method: 'POST', headers: {}, body: 'x' }, {}).then(
      () => assert.fail('the request should have been refused'),
      (caught: unknown) => caught,
    );
    assert.deepEqual(classifyTransportError(error), {
      kind: 'connection',
      status: null,
      message: 'upstream connection failed: SSRF_BLOCKED',
    });
    assert.equal(received, before);
  } finally {
    await guarded.close();
  }
});

// The server counts connections opened, not open ones: count the open ones here.
let openNow = 0;
server.on('connection', (socket) => {
  openNow++;
  socket.on('close', () => openNow--);
});

test('maxConnsPerHost caps open connections: requests beyond it wait for one to free up', async () => {
  const capped = new UndiciTransport({ requestTimeoutMs: 5_000, maxConnsPerHost: 2 });
  const openBefore = openNow;
  try {
    const pending = Array.from({ length: 5 }, () =>
      capped.send({ url, method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hold' }, {}),
    );
    await eventually('two held requests at the upstream', () => held.length === 2);
    // The three others wait in the pool: give any that could go out the time to reach the upstream.
    const receivedBefore = received;
    await send('a request on another pool');
    assert.equal(received, receivedBefore + 1);
    assert.equal(held.length, 2);
    assert.ok(openNow - openBefore <= 3, `two connections open for the capped transport (${openNow - openBefore} with the other pool's)`);
    let released = 0;
    while (released < 5) {
      await eventually('the next held request', () => held.length > 0);
      for (const res of held.splice(0)) {
        res.writeHead(200).end('done');
        released++;
      }
    }
    for (const response of await Promise.all(pending)) assert.equal(await text(response), 'done');
  } finally {
    await capped.close();
  }
});

test('maxIdleConns bounds the idle connections kept over all hosts', async () => {
  // Two origins for one server: 127.0.0.1 and localhost.
  const bounded = new UndiciTransport({ requestTimeoutMs: 5_000, maxIdleConns: 3, maxIdleConnsPerHost: 10 });
  try {
    const targets = [url, url.replace('127.0.0.1', 'localhost')];
    const pending = targets.flatMap((target) =>
      Array.from({ length: 4 }, () => bounded.send({ url: target, method: 'POST', headers: {}, body: 'hold' }, {})),
    );
    await eventually('eight held requests', () => held.length === 8);
    for (const res of held.splice(0)) res.writeHead(200).end('done');
    for (const response of await Promise.all(pending)) assert.equal(await text(response), 'done');
    await eventually('three idle connections kept', () => bounded.idleConnections().total === 3);
    const { byOrigin } = bounded.idleConnections();
    assert.equal(
      Object.values(byOrigin).reduce((a, b) => a + b, 0),
      3,
    );
  } finally {
    await bounded.close();
  }
});

test('connections beyond the idle bound that the load keeps reusing stay open; once the load stops, the surplus closes', async () => {
  const bounded = new UndiciTransport({ requestTimeoutMs: 5_000, maxIdleConnsPerHost: 1 });
  try {
    const opened = connections;
    // Ten waves of four concurrent requests: more in flight than the bound, as under steady load.
    for (let wave = 0; wave < 10; wave++) {
      const pending = Array.from({ length: 4 }, () => bounded.send({ url, method: 'POST', headers: {}, body: 'hold' }, {}));
      await eventually(`wave ${wave} held at the upstream`, () => held.length === 4);
      for (const res of held.splice(0)) res.writeHead(200).end('done');
      for (const response of await Promise.all(pending)) assert.equal(await text(response), 'done');
    }
    // Closing each surplus connection the moment it turned idle opened 3 new ones a wave (31 in all).
    // Slack for a stalled machine: a pause past the grace period between two waves costs 3.
    const openedByWaves = connections - opened;
    assert.ok(openedByWaves <= 10, `the waves reused their connections (${openedByWaves} opened)`);
    await eventually('the surplus idle connections to close', () => bounded.idleConnections().total === 1);
  } finally {
    await bounded.close();
  }
});

test("resetConnections(origin) ends that origin's connections only", async () => {
  const pooled = new UndiciTransport({ requestTimeoutMs: 5_000 });
  try {
    const other = url.replace('127.0.0.1', 'localhost');
    for (const target of [url, other])
      assert.equal(await text(await pooled.send({ url: target, method: 'POST', headers: {}, body: 'x' }, {})), 'echo x');
    await eventually('one idle connection per origin', () => pooled.idleConnections().total === 2);
    const before = openNow;
    assert.equal(await pooled.resetConnections(new URL(url).origin), 1);
    await eventually('the reset origin’s connection to close', () => openNow === before - 1);
    assert.deepEqual(pooled.idleConnections().byOrigin, { [new URL(other).origin]: 1 });
    // The pool of the reset origin still serves, on a new connection.
    assert.equal(await text(await pooled.send({ url, method: 'POST', headers: {}, body: 'y' }, {})), 'echo y');
  } finally {
    await pooled.close();
  }
});

test('an upstream URL that does not parse rejects the promise send returns, it does not throw', async () => {
  let sending: Promise<unknown> | undefined;
  assert.doesNotThrow(() => {
    sending = transport.send(
      { url: 'not a url', method: 'POST', headers: {}, body: '' },
      { buffer: { maxBytes: 1024, maxErrorBytes: 1024 } },
    );
  });
  await assert.rejects(sending!, { code: 'ERR_INVALID_URL' });
});
