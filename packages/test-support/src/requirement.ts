/**
 * @module requirement
 * How a test reacts to a missing outside dependency: on a developer's
 * machine it skips with a message that says how to enable it; under CI
 * (`CI` set) it fails, because there a missing service is a broken run,
 * not an optional extra.
 */

/** A dependency that is either there (with what a test needs) or not (with why). */
export type Requirement<T> = ({ available: true; skip: false } & T) | { available: false; skip: string };

/** True when running under CI, where missing dependencies must fail the run. */
export function inCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

/**
 * Resolves a missing dependency: throws under CI, else returns the skip
 * message for `test(name, { skip }, fn)`.
 */
export function missing<T>(what: string, howToEnable: string, env: NodeJS.ProcessEnv = process.env): Requirement<T> {
  const message = `${what}. ${howToEnable}`;
  if (inCI(env)) throw new Error(`CI requires this dependency: ${message}`);
  return { available: false, skip: message };
}
