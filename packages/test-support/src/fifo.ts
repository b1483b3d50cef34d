/**
 * @module fifo
 * Named pipes for tests of code that must never wait on one. Opening a FIFO
 * for reading blocks until a writer comes, inside a libuv thread that no test
 * timeout can cancel: a regression would fail its test and then stall the
 * whole run. {@link settlesWithoutWaitingOn} fails the test and releases the
 * stuck reader, so the run goes on.
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
 * Awaits `work`, which reads the FIFO at `fifo`, and fails the test if it has not settled within
 * `timeoutMs` (default 5 s): it was waiting for a writer. A reader stuck on the FIFO is then
 * released (its write end opened and closed, which reads as end of file) before the failure.
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
  await releaseReaders(fifo);
  await work.catch(() => undefined);
  assert.fail(`still waiting on the FIFO ${fifo} after ${timeoutMs} ms`);
}

/** Opens and closes the FIFO's write end; without a reader there is nothing to release (ENXIO). */
async function releaseReaders(fifo: string): Promise<void> {
  try {
    await (await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
  }
}
