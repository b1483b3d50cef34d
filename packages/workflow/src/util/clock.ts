/**
 * @module clock
 * Injected time. Structurally the same `Clock` as `@switchyard/core-routing`
 * (whose `FakeScheduler` the tests use), declared here so the workflow does
 * not depend on the routing package.
 */

/** A source of the current time in epoch milliseconds. */
export interface Clock {
  now(): number;
}

/** The system clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** The clock's time as an RFC 3339 string. */
export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}
