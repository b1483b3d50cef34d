/**
 * @module fifo
 * Named pipes for tests of code that must never wait on one. Opening a FIFO
 * for reading blocks until a writer comes (and for writing, until a reader
 * comes), inside a libuv thread that no test timeout can cancel: a regression
 * would fail its test and then stall the whole run.
 * {@link settlesWithoutWaitingOn} fails the test and releases the stuck
 * opener, so the run goes on.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { promisify } from 'node:util';

/**
 * Creates a FIFO (named pipe) at `path` with the system's `mkfifo`.
 *
 * @example
 * ```ts
 * await makeFifo(join(repo.root, 'pipe'));
 * ```
 */
export async function makeFifo(path: string): Promise<void> {
  await promisify(execFile)('mkfifo', [path]);
}

/**
 * Awaits `work`, which opens the FIFO at `fifo` (to read or to write), and fails the test if it has
 * not settled within `timeoutMs` (default 5 s): it was waiting for the other end. Whatever is stuck
 * on the FIFO is then released before the failure: both ends are opened and closed, which a reader
 * reads as end of file and a writer sees as a reader that went away.
 *
 * @example
 * ```ts
 * await assert.rejects(settlesWithoutWaitingOn(pipe, readConfinedFile(root, 'pipe')), { code: 'not_found' });
 * ```
 */
export async function settlesWithoutWaitingOn<T>(fifo: string, work: Promise<T>, timeoutMs = 5_000): Promise<T> {
  const hung = Symbol('hung');
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof hung>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, hung);
  });
  try {
    const first = await Promise.race([work, deadline]);
    if (first !== hung) return first as T;
  } finally {
    clearTimeout(timer);
  }
  await releaseWaiters(fifo);
  await work.catch(() => undefined);
  assert.fail(`still waiting on the FIFO ${fifo} after ${timeoutMs} ms`);
}

/**
 * Opens and closes both ends of the FIFO. The read end opens at once without blocking and lets a
 * writer stuck in its open through; holding it, the write end opens too and lets a stuck reader through.
 */
async function releaseWaiters(fifo: string): Promise<void> {
  const readEnd = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    await (await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)).close();
  } finally {
    await readEnd.close();
  }
}
