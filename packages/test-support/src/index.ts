/**
 * @module @switchyard/test-support
 * Helpers for tests that need something outside Node: PostgreSQL, headless
 * Chromium, promtool, the Codex CLI (missing ones skip with a how-to, or fail under CI),
 * fake OpenAI, Anthropic, Gemini and cloud coding-assistant upstreams on
 * loopback, a fake OAuth device-flow server, a staged DNS lookup,
 * temporary git repositories, raw `Expect: 100-continue` requests, the
 * check of a `405 method_not_allowed` answer, named pipes for code that
 * must not wait on one, and the way to start the workspace's programs as
 * processes (built when the build is fresh, else from source).
 */

export {
  AGENT_CLI_PACKAGES,
  type AgentCliForTests,
  type AgentCliName,
  type ChromiumForTests,
  type CodexCliForTests,
  type PromtoolForTests,
  requireAgentCli,
  requireChromium,
  requireCodexCli,
  requirePromtool,
} from './binaries.js';
export { type ContinueOutcome, type ContinueRequest, sendExpectingContinue } from './expectContinue.js';
export { anthropicDialect, startFakeAnthropic } from './fakeAnthropic.js';
export { FakeAuthServer, type PollStep, type RecordedRequest } from './fakeAuthServer.js';
export { cloudAssistantDialect, eventStreamFrame, startFakeCloudAssistant } from './fakeCloudAssistant.js';
export { geminiDialect, startFakeGemini } from './fakeGemini.js';
export { type FakeOpenAi, type FakeOpenAiOptions, openAiDialect, startFakeOpenAi } from './fakeOpenAi.js';
export {
  FAKE_TOOL_ARGUMENTS,
  FAKE_USAGE,
  type FakeBehaviour,
  type FakeDialect,
  type FakeRoute,
  type FakeUpstream,
  type FakeUpstreamOptions,
  type ReceivedRequest,
  type StreamPiece,
  startFakeUpstream,
} from './fakeUpstream.js';
export { makeFifo, settlesWithoutWaitingOn } from './fifo.js';
export { type TempGitRepo, tempGitRepo } from './gitRepo.js';
export { assertMethodNotAllowed } from './methodNotAllowed.js';
export { DEFAULT_PG_URL, type PostgresForTests, postgresForTests, sqlOnce } from './postgres.js';
export { inCI, missing, type Requirement } from './requirement.js';
export { openEvents, type SseConnection, type SseEvent as TestSseEvent } from './sseClient.js';
export { type StagedLookup, stagedLookup } from './stagedLookup.js';
export { startTcpProxy, type TcpProxy } from './tcpProxy.js';
export { eventually } from './waitFor.js';
export {
  buildIsFresh,
  childrenRunBuilt,
  runWorkspaceProgram,
  SOURCE_FLAGS,
  type WorkspaceProgram,
  workspaceProgram,
} from './workspaceProgram.js';
