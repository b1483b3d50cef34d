/**
 * @module @switchyard/runtime
 * The primitives every Switchyard package shares: an injectable clock and
 * scheduler, `every()`, `withTimeout()`, a `FakeScheduler` for tests, and the
 * one duration reader (`durationMs`) and capped body read (`readCappedBody`).
 * PostgreSQL helpers are the `@switchyard/runtime/postgres` subpath.
 */

export { type CappedBodyOptions, readCappedBody } from './cappedBody.js';
export { type Clock, every, FakeScheduler, type Scheduler, systemClock, systemScheduler, type TimerHandle } from './clock.js';
export { type DurationOptions, durationMs } from './duration.js';
export { RuntimeError, type RuntimeErrorCode } from './errors.js';
export { Teardown } from './teardown.js';
export { withTimeout } from './timeout.js';
