import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { ensureRequestId, requestIdFrom } from './requestId.js';

test('a sane X-Request-Id is kept; anything else gets a fresh UUID', () => {
  assert.equal(requestIdFrom({ 'x-request-id': 'abc-123_4.5:6/7+8=9@x' }), 'abc-123_4.5:6/7+8=9@x');
  assert.equal(requestIdFrom(new Headers({ 'X-Request-Id': 'from-fetch' })), 'from-fetch');
  for (const bad of ['', 'a b', 'line\nbreak', 'x'.repeat(129), '<script>', 'ünï']) {
    assert.match(requestIdFrom({ 'x-request-id': bad }), /^[0-9a-f-]{36}$/, JSON.stringify(bad));
  }
  assert.match(requestIdFrom({}), /^[0-9a-f-]{36}$/);
  assert.equal(
    requestIdFrom({}, () => 'fixed'),
    'fixed',
  );
});

test('a kept id never contains characters that could break a log line or a header (property)', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (value) => {
      const id = requestIdFrom({ 'x-request-id': value });
      assert.match(id, /^[A-Za-z0-9._:@/+=-]{1,128}$/);
    }),
  );
});

test('ensureRequestId echoes the id on the response', async () => {
  const server = createServer((req, res) => {
    const id = ensureRequestId(req, res);
    res.end(id);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const kept = await fetch(`http://127.0.0.1:${port}/`, { headers: { 'X-Request-Id': 'client-7' } });
    assert.equal(kept.headers.get('x-request-id'), 'client-7');
    assert.equal(await kept.text(), 'client-7');
    const fresh = await fetch(`http://127.0.0.1:${port}/`);
    const id = fresh.headers.get('x-request-id');
    assert.match(id ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(await fresh.text(), id);
  } finally {
    server.close();
  }
});
