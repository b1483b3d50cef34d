/**
 * @module @switchyard/runtime
 * The primitives every Switchyard package shares: an injectable clock and
 * scheduler, `every()`, `withTimeout()` and a `FakeScheduler` for tests.
 * PostgreSQL helpers are the `@switchyard/runtime/postgres` subpath.
 */
export { type Clock, every, FakeScheduler, type Scheduler, systemClock, systemScheduler, type TimerHandle } from './clock.js';
export { RuntimeError, type RuntimeErrorCode } from './errors.js';
export { Teardown } from './teardown.js';
export { withTimeout } from './timeout.js';
