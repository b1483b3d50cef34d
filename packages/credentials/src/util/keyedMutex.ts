/**
 * @module keyedMutex
 * Serializes async work per key, with an exclusive mode that waits for all
 * keyed work and holds new work back (a store-wide rekey against per-record
 * writes).
 */

/**
 * Runs tasks one at a time per key; tasks on different keys run concurrently.
 *
 * @example
 * ```ts
 * const mutex = new KeyedMutex();
 * await mutex.run('openai-1', () => writeFile(...));
 * await mutex.runExclusive(() => rekeyEverything());
 * ```
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly active = new Set<Promise<void>>();
  private exclusive: Promise<void> | undefined;

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    while (this.exclusive) await this.exclusive;
    // From here to registration nothing awaits, so an exclusive task started meanwhile sees this one.
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    this.active.add(tail);
    void tail.then(() => {
      this.active.delete(tail);
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  async runExclusive<T>(task: () => Promise<T>): Promise<T> {
    while (this.exclusive) await this.exclusive;
    let release!: () => void;
    this.exclusive = new Promise<void>((resolve) => (release = resolve));
    try {
      await Promise.all([...this.active]);
      return await task();
    } finally {
      this.exclusive = undefined;
      release();
    }
  }
}
