/**
 * @module teardown
 * A stack of undo steps for a start-up that opens several resources in turn:
 * each one opened pushes its close, and a failure further on closes what was
 * opened, newest first, once, without one failed close skipping the rest.
 */

/**
 * Undo steps, run newest first.
 *
 * @example
 * ```ts
 * const undo = new Teardown();
 * try {
 *   const pool = await openPool(); undo.push(() => pool.end());
 *   const server = await listen(); undo.push(() => server.close());
 * } catch (error) {
 *   await undo.run();
 *   throw error;
 * }
 * ```
 */
export class Teardown {
  private readonly steps: (() => unknown)[] = [];

  /** Adds the close of something just opened. */
  push(step: () => unknown): void {
    this.steps.push(step);
  }

  /** Runs every step, newest first; a step that fails does not stop the others. Returns the failures. */
  async run(): Promise<unknown[]> {
    const failures: unknown[] = [];
    for (let step = this.steps.pop(); step !== undefined; step = this.steps.pop()) {
      try {
        await step();
      } catch (error) {
        failures.push(error);
      }
    }
    return failures;
  }
}
