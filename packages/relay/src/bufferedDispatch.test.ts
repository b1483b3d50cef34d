import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { headersOf } from './bufferedDispatch.js';
import { UndiciTransport } from './upstream.js';

// The upstream answers by path: /echo echoes, /hold waits until released, /big sends `size` bytes,
// /hints sends 103 Early Hints first, /partial sends headers and part of a body, then waits.
let received = 0;
let abandoned = 0;
let partials = 0;
const held: ServerResponse[] = [];
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    received++;
    res.on('close', () => {
      if (!res.writableFinished) abandoned++;
    });
    const url = new URL(req.url ?? '/', 'http://upstream');
    switch (url.pathname) {
      case '/hold':
        held.push(res);
        return;
      case '/big': {
        const status = Number(url.searchParams.get('status') ?? 200);
        const size = Number(url.searchParams.get('size'));
        res.writeHead(status, { 'content-type': 'application/json' });
        // In several writes, so the gateway sees several chunks.
        for (let sent = 0; sent < size; sent += 64 * 1024) res.write(Buffer.alloc(Math.min(64 * 1024, size - sent), 0x61));
        res.end();
        return;
      }
      case '/hints':
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('after the hints');
        return;
      case '/partial':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first ', () => partials++);
        return;
      default:
        res.setHeader('x-multi', ['one', 'two']);
        res.writeHead(201, { 'content-type': 'text/plain; charset=utf-8', 'X-Mixed-Case': 'kept' }).end(`echo ${body}`);
    }
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
after(async () => {
  await transport.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const LIMITS = { maxBytes: 256 * 1024, maxErrorBytes: 16 * 1024 };
const send = (path: string, body = '', signal?: AbortSignal) =>
  transport.send(
    { url: `${base}${path}`, method: 'POST', headers: { 'content-type': 'text/plain' }, body },
    signal ? { signal, buffer: LIMITS } : { buffer: LIMITS },
  );

test('a buffered send resolves with the whole body as bytes, the status and the headers by lower-case name', async () => {
  const response = await send('/echo', 'hello');
  assert.equal(response.status, 201);
  assert.equal(response.bytes?.toString('utf8'), 'echo hello');
  assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(response.headers['x-mixed-case'], 'kept');
  assert.equal(response.headers['x-multi'], 'one, two');
  // The body is also readable as a stream of chunks, for readers that iterate.
  let iterated = '';
  for await (const chunk of response.body) iterated += Buffer.from(chunk).toString('utf8');
  assert.equal(iterated, 'echo hello');
});

test('a body that arrives in many chunks is joined in order', async () => {
  const response = await send(`/big?size=${200 * 1024}`);
  assert.equal(response.bytes?.length, 200 * 1024);
  assert.ok(response.bytes?.every((byte) => byte === 0x61));
});

test('1xx answers before the real one are skipped', async () => {
  const response = await send('/hints');
  assert.equal(response.status, 200);
  assert.equal(response.bytes?.toString('utf8'), 'after the hints');
  assert.equal(response.headers.link, undefined);
});

test('a success body over maxBytes fails with BODY_TOO_LARGE, and the pool still serves the next request', async () => {
  await assert.rejects(send(`/big?size=${LIMITS.maxBytes + 1}`), { code: 'BODY_TOO_LARGE' });
  assert.equal((await send('/echo', 'next')).bytes?.toString('utf8'), 'echo next');
});

test('an error body over maxErrorBytes resolves with its status and no body', async () => {
  const response = await send(`/big?status=503&size=${LIMITS.maxErrorBytes + 1}`);
  assert.equal(response.status, 503);
  assert.equal(response.bytes?.length, 0);
  // Within the bound an error body is kept.
  const small = await send(`/big?status=429&size=100`);
  assert.equal(small.status, 429);
  assert.equal(small.bytes?.length, 100);
});

test('aborting a shared signal aborts the buffered request in flight, and leaves no listener behind', async () => {
  const controller = new AbortController();
  for (let i = 0; i < 10; i++) assert.equal((await send('/echo', `n${i}`, controller.signal)).bytes?.toString(), `echo n${i}`);
  assert.ok(getEventListeners(controller.signal, 'abort').length <= 1);
  const before = abandoned;
  const pending = send('/hold', '', controller.signal);
  await eventually('the held request to reach the upstream', () => held.length === 1);
  controller.abort();
  await assert.rejects(pending, { name: 'AbortError' });
  await eventually('the upstream to see the request abandoned', () => abandoned === before + 1);
  held.splice(0);
});

test('aborting mid-body rejects the buffered send', async () => {
  const controller = new AbortController();
  const before = partials;
  const pending = send('/partial', '', controller.signal);
  await eventually('the upstream to send the headers and part of the body', () => partials === before + 1);
  controller.abort();
  await assert.rejects(pending, { name: 'AbortError' });
});

test('a signal aborted before the buffered request never reaches the upstream', async () => {
  const before = received;
  await assert.rejects(send('/echo', 'never', AbortSignal.abort()), { name: 'AbortError' });
  assert.equal((await send('/echo', 'after')).bytes?.toString(), 'echo after');
  assert.equal(received, before + 1);
});

test('headersOf joins repeated fields, lower-cases names and skips __proto__', () => {
  const raw = ['Content-Type', 'a/b', 'Set-Cookie', 'x=1', 'set-cookie', 'y=2', '__proto__', 'polluted'].map((s) => Buffer.from(s));
  const headers = headersOf(raw);
  assert.deepEqual({ ...headers }, { 'content-type': 'a/b', 'set-cookie': 'x=1, y=2' });
  assert.equal(Object.getPrototypeOf(headers), Object.prototype);
});
