/**
 * @module timeout
 * Runs async work (a health probe, a recovery check, a healing action) with
 * a deadline on the injected scheduler, so a hung upstream can never hold a
 * loop forever, and tests move the deadline with a `FakeScheduler`.
 */
import type { Scheduler, TimerHandle } from './clock.js';
import { RuntimeError } from './errors.js';

/**
 * Calls `run` with a signal that aborts after `timeoutMs`, and rejects with
 * a `RuntimeError` (code `timeout`) at that moment even if `run` ignores the
 * signal. A synchronous throw from `run` becomes a rejection.
 */
export function withTimeout<T>(
  scheduler: Scheduler,
  timeoutMs: number,
  what: string,
  run: (signal: AbortSignal) => Promise<T> | T,
): Promise<T> {
  const controller = new AbortController();
  let timer: TimerHandle | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = scheduler.setTimeout(() => {
      const error = new RuntimeError('timeout', `${what} timed out after ${timeoutMs} ms`);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  const work = Promise.resolve().then(() => run(controller.signal));
  return Promise.race([work, deadline]).finally(() => {
    if (timer !== undefined) scheduler.clearTimeout(timer);
  });
}
