/**
 * @module waitFor
 * Waiting for a condition with a deadline, instead of sleeping a fixed time.
 */
import assert from 'node:assert/strict';

/**
 * Resolves once `predicate` holds, checking every 10 ms; fails the test with
 * `what` after `timeoutMs` (default 10 s).
 *
 * @example
 * ```ts
 * await eventually('node b to hear the change', () => seen.length === 1);
 * ```
 */
export async function eventually(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
