/**
 * @module abortableSleep
 * A wait that a job's signal cuts short. Loops that poll (an agent session
 * until it is stable, CI until it finishes) call it once per round on one
 * long-lived signal, so its abort listener is removed when the wait ends:
 * left behind, one listener per round would pile up on the signal for the
 * whole job.
 */

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts (at once if it already has). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
