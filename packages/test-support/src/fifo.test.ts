import assert from 'node:assert/strict';
import { constants } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { makeFifo, settlesWithoutWaitingOn } from './fifo.js';

let dir: string;
let fifo: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'test-support-fifo-'));
  fifo = join(dir, 'pipe');
  await makeFifo(fifo);
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const stillWaiting = /still waiting on the FIFO .*pipe after 100 ms/;

test('an open for reading stuck on the FIFO fails the test and is let through, so the run goes on', async () => {
  const stuck = open(fifo, constants.O_RDONLY);
  await assert.rejects(settlesWithoutWaitingOn(fifo, stuck, 100), stillWaiting);
  const reader = await stuck;
  assert.equal((await reader.read(Buffer.alloc(1), 0, 1)).bytesRead, 0, 'the writer that let it through is gone: end of file');
  await reader.close();
});

test('an open for writing stuck on the FIFO fails the test and is let through, so the run goes on', async () => {
  const stuck = open(fifo, constants.O_WRONLY);
  await assert.rejects(settlesWithoutWaitingOn(fifo, stuck, 100), stillWaiting);
  await (await stuck).close();
});

test('work that settles in time passes its result through', async () => {
  assert.equal(await settlesWithoutWaitingOn(fifo, Promise.resolve('done'), 100), 'done');
});
