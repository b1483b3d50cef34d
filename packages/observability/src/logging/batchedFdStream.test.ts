/**
 * The stdout/stderr log destination: every line written once and in order,
 * through short writes, `EAGAIN`, a reader that went away and a stalled one.
 * (That a line reaches a real stdout promptly, and that lines gathered at
 * `process.exit()` are written, is `stdoutDestination.test.ts`.)
 */
import assert from 'node:assert/strict';
import { closeSync, write as fsWrite, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { BatchedFdStream, type FdWriter, writesWithoutWaiting } from './batchedFdStream.js';

const dir = mkdtempSync(join(tmpdir(), 'batched-fd-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const flushed = (stream: BatchedFdStream) => new Promise<void>((resolve) => stream.flush(() => resolve()));
const lines = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `{"msg":"line ${from + i}","é":"ü"}\n`);

/** A writer that records what it was given and answers as `answer` says, asynchronously like fs.write. */
function scriptedWriter(answer: (call: number, buffer: Buffer) => NodeJS.ErrnoException | number): FdWriter & { out: Buffer[] } {
  let call = 0;
  const out: Buffer[] = [];
  return {
    out,
    write(_fd, buffer, callback) {
      const result = answer(call++, buffer);
      setImmediate(() => {
        if (typeof result === 'number') {
          out.push(Buffer.from(buffer.subarray(0, result)));
          callback(null, result);
        } else callback(result, 0);
      });
    },
    writeSync(_fd, buffer) {
      out.push(Buffer.from(buffer));
      return buffer.length;
    },
  };
}

const errno = (code: string) => Object.assign(new Error(code), { code }) as NodeJS.ErrnoException;

test('lines reach the file in order, each once, in batches of about batchChars', async () => {
  const path = join(dir, 'ordered.log');
  const fd = openSync(path, 'w');
  let writes = 0;
  const stream = new BatchedFdStream({
    fd,
    batchChars: 1024,
    // The asynchronous path, on a file for convenience (a file alone would be written synchronously).
    synchronous: false,
    writer: {
      write: (f, b, cb) => {
        writes++;
        fsWrite(f, b, 0, b.length, null, cb);
      },
      writeSync: () => assert.fail('no synchronous write before exit'),
    },
  });
  const sent = lines(2000);
  for (const line of sent) stream.write(line);
  await flushed(stream);
  closeSync(fd);
  assert.equal(readFileSync(path, 'utf8'), sent.join(''));
  // 2,000 lines of about 30 characters in batches of 1,024: dozens of writes, not thousands.
  assert.ok(writes < 200, `${writes} writes`);
});

test('a lone line is written within flushMs, without a flush or more lines', async () => {
  const writer = scriptedWriter((_call, buffer) => buffer.length);
  const stream = new BatchedFdStream({ fd: -1, flushMs: 20, writer });
  stream.write('{"msg":"gateway_started"}\n');
  assert.equal(writer.out.length, 0, 'not written at once: it waits for more lines or the timer');
  await eventually('the timer to write the line', () => writer.out.length === 1, 5000);
  assert.equal(Buffer.concat(writer.out).toString(), '{"msg":"gateway_started"}\n');
});

test('a short write is completed with the rest, in order', async () => {
  // Every write takes at most 7 bytes, including ones that split a multi-byte character.
  const writer = scriptedWriter((_call, buffer) => Math.min(7, buffer.length));
  const stream = new BatchedFdStream({ fd: -1, batchChars: 64, writer });
  const sent = lines(50);
  for (const line of sent) stream.write(line);
  await flushed(stream);
  assert.equal(Buffer.concat(writer.out).toString('utf8'), sent.join(''));
});

test('EAGAIN is retried until the pipe takes the bytes, nothing lost or doubled', async () => {
  const writer = scriptedWriter((call, buffer) => (call % 3 === 0 ? errno('EAGAIN') : buffer.length));
  const stream = new BatchedFdStream({ fd: -1, batchChars: 64, retryMs: 1, writer });
  const sent = lines(40);
  for (const line of sent) stream.write(line);
  await flushed(stream);
  assert.equal(Buffer.concat(writer.out).toString('utf8'), sent.join(''));
  assert.equal(stream.dropped, 0);
});

test('a reader that went away (EPIPE): lines are dropped and counted, and writing goes on without throwing', async () => {
  const writer = scriptedWriter(() => errno('EPIPE'));
  const stream = new BatchedFdStream({ fd: -1, batchChars: 64, writer });
  for (const line of lines(10)) stream.write(line);
  await flushed(stream);
  assert.equal(stream.dropped, 10);
  assert.equal(stream.write('{"msg":"later"}\n'), false);
  assert.equal(stream.dropped, 11);
});

test('a stalled reader: what waits is bounded by maxPendingChars, the rest dropped and counted', async () => {
  const held: (() => void)[] = [];
  let written = '';
  const writer: FdWriter = {
    write: (_fd, buffer, callback) =>
      void held.push(() => {
        written += buffer.toString();
        callback(null, buffer.length);
      }),
    writeSync: (_fd, buffer) => buffer.length,
  };
  const stream = new BatchedFdStream({ fd: -1, batchChars: 100, maxPendingChars: 1000, writer });
  const line = `${'x'.repeat(99)}\n`;
  for (let i = 0; i < 50; i++) stream.write(line);
  // One batch is in flight (the write never returns); 1,000 characters wait; the rest is dropped.
  assert.equal(held.length, 1);
  assert.equal(stream.dropped, 50 - 1 - 10);
  // The reader catches up: the batch in flight and the ten that waited are written, in order.
  while (held.length > 0) held.shift()!();
  assert.equal(written, line.repeat(11));
});

test('flushSync (at exit) writes the write in progress and what waits', () => {
  const out: Buffer[] = [];
  const writer: FdWriter = {
    write: () => undefined, // never completes: the process is exiting
    writeSync: (_fd, buffer) => {
      out.push(Buffer.from(buffer));
      return buffer.length;
    },
  };
  const stream = new BatchedFdStream({ fd: -1, batchChars: 64, writer });
  const sent = lines(20);
  for (const line of sent) stream.write(line);
  stream.flushSync();
  assert.equal(Buffer.concat(out).toString('utf8'), sent.join(''));
});

test('a regular file is written synchronously: lines gathered when the process exits are in it once each', () => {
  const path = join(dir, 'exit.log');
  const fd = openSync(path, 'w');
  const stream = new BatchedFdStream({ fd, batchChars: 1024 });
  const sent = lines(2000);
  for (const line of sent) stream.write(line);
  // What the exit hook does, with batches written before it and no turn of the event loop between.
  stream.flushSync();
  closeSync(fd);
  assert.equal(readFileSync(path, 'utf8'), sent.join(''), 'every line once, in order (an asynchronous batch in flight was written twice)');
});

test('files and non-terminal devices never wait on a reader; a descriptor that is not open is treated as one that may', () => {
  const fd = openSync(join(dir, 'kind.log'), 'w');
  const devNull = openSync('/dev/null', 'w');
  after(() => {
    closeSync(fd);
    closeSync(devNull);
  });
  assert.equal(writesWithoutWaiting(fd), true);
  assert.equal(writesWithoutWaiting(devNull), true);
  assert.equal(writesWithoutWaiting(-1), false);
});
