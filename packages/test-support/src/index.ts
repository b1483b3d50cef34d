/**
 * @module @switchyard/test-support
 * Helpers for tests that need something outside Node: PostgreSQL, headless
 * Chromium, promtool. Missing ones skip with a how-to, or fail under CI.
 */

export { type ChromiumForTests, type PromtoolForTests, requireChromium, requirePromtool } from './binaries.js';
export { type FakeBehaviour, type FakeOpenAi, type FakeOpenAiOptions, type ReceivedRequest, startFakeOpenAi } from './fakeOpenAi.js';
export { DEFAULT_PG_URL, type PostgresForTests, postgresForTests } from './postgres.js';
export { inCI, missing, type Requirement } from './requirement.js';
