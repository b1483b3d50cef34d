import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import fc from 'fast-check';
import { readCappedBody } from './cappedBody.js';
import { RuntimeError } from './errors.js';

const bytes = (n: number, fill = 0x61) => new Uint8Array(n).fill(fill);

/** The same chunks as a Node stream and as a plain async iterable (the two paths of the helper). */
function bodies(chunks: Uint8Array[]): Array<[string, () => AsyncIterable<Uint8Array>]> {
  return [
    ['stream', () => Readable.from(chunks, { objectMode: false })],
    [
      'iterable',
      () =>
        (async function* () {
          yield* chunks;
        })(),
    ],
  ];
}

test('a body of exactly the cap is read whole; one byte more is refused with the default too_large', async () => {
  for (const [kind, make] of bodies([bytes(3), bytes(4), bytes(3)])) {
    assert.equal((await readCappedBody(make(), 10)).length, 10, kind);
    await assert.rejects(readCappedBody(make(), 9), (e: unknown) => e instanceof RuntimeError && e.code === 'too_large', kind);
  }
  for (const [kind, make] of bodies([])) assert.equal((await readCappedBody(make(), 0)).length, 0, kind);
  for (const [kind, make] of bodies([bytes(1)])) await assert.rejects(readCappedBody(make(), 0), RuntimeError, kind);
});

test("the caller's error is thrown, naming the caller's cap", async () => {
  for (const [kind, make] of bodies([bytes(5), bytes(5)])) {
    await assert.rejects(readCappedBody(make(), 7, { tooLarge: (cap) => new Error(`over ${cap}`) }), { message: 'over 7' }, kind);
  }
});

test('any split of a body into chunks reads the same bytes, and is refused iff it is over the cap (property)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 12 }), fc.nat({ max: 200 }), async (chunks, cap) => {
      const whole = Buffer.concat(chunks);
      for (const [, make] of bodies(chunks)) {
        if (whole.length <= cap) assert.deepEqual(await readCappedBody(make(), cap), whole);
        else await assert.rejects(readCappedBody(make(), cap), RuntimeError);
      }
    }),
    { numRuns: 200 },
  );
});

test('a stream over the cap is destroyed by default', async () => {
  const stream = new Readable({ read() {} });
  const read = readCappedBody(stream, 4);
  stream.push(bytes(5));
  await assert.rejects(read, RuntimeError);
  assert.equal(stream.destroyed, true);
});

test('a stream that closes before its end rejects with the caller’s error, or ERR_STREAM_PREMATURE_CLOSE', async () => {
  const first = new Readable({ read() {} });
  const read = readCappedBody(first, 100);
  first.push(bytes(2));
  first.destroy();
  await assert.rejects(read, { code: 'ERR_STREAM_PREMATURE_CLOSE' });
  const second = new Readable({ read() {} });
  const mine = readCappedBody(second, 100, { closedEarly: () => Object.assign(new Error('gone'), { code: 'ECONNRESET' }) });
  second.destroy();
  await assert.rejects(mine, { code: 'ECONNRESET' });
  const failing = new Readable({ read() {} });
  const failed = readCappedBody(failing, 100);
  failing.destroy(new Error('boom'));
  await assert.rejects(failed, { message: 'boom' });
});

test('rest: drain reads a chunked request to its end before refusing it, so the server can still answer 413', async () => {
  const server = createServer(async (req, res) => {
    try {
      await readCappedBody(req, 1000, { rest: 'drain' });
      res.end('ok');
    } catch (error) {
      res.statusCode = 413;
      res.end((error as Error).message);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/' }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      for (let i = 0; i < 3; i++) req.write(bytes(500));
      req.end();
    });
    assert.equal(status, 413);
  } finally {
    server.close();
  }
});

test('rest: drain cuts a body whose rest passes the cap again', async () => {
  const stream = new Readable({ read() {} });
  const read = readCappedBody(stream, 4, { rest: 'drain' });
  stream.push(bytes(5)); // over the cap: the rest is drained from here
  stream.push(bytes(4));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(stream.destroyed, false);
  stream.push(bytes(1)); // 5 dropped > 4
  await assert.rejects(read, RuntimeError);
  assert.equal(stream.destroyed, true);
});
