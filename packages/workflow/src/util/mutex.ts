/**
 * @module mutex
 * A promise-chain mutex: callers run one at a time, in arrival order.
 */

/** Serializes async sections. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  /** Runs `fn` once every earlier holder has finished. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    // The next holder waits for this one to settle, whatever the outcome.
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
