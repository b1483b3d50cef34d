/**
 * @module callEach
 * Tells every listener of a store about a change. A throwing listener must
 * not turn a completed write into a failed one, nor keep the change from
 * the listeners after it; listeners report their own failures.
 */

/** Calls each of `listeners` with `value`, ignoring what they throw. */
export function callEach<T>(listeners: readonly ((value: T) => void)[], value: T): void {
  for (const listener of listeners) {
    try {
      listener(value);
    } catch {
      // See the module notes.
    }
  }
}
