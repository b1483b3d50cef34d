/**
 * @module @switchyard/agent-session/engine
 * The agent session engine without HTTP: drive one interactive agent (any
 * terminal program through node-pty and @xterm/headless, or an Agent Client
 * Protocol agent over stdio) and read its conversation as messages, a
 * status and typed events.
 */
export { type AcpPermissionPolicy, DEFAULT_PERMISSION_TIMEOUT_MS } from './acp/acpPermissions.js';
export { ACP_PROTOCOL_VERSION, AcpAgentSession, type AcpSessionOptions } from './acp/acpSession.js';
export type {
  ActivityEvent,
  AgentActivity,
  PermissionEvent,
  PermissionOutcome,
  PlanActivity,
  ThoughtActivity,
  ToolCallActivity,
} from './activity.js';
export { type AgentSession, type AgentTransport, checkRawInput, checkUserMessage, INPUT_LIMITS } from './agentSession.js';
export {
  type AgentErrorEvent,
  type AgentExit,
  type AgentMessage,
  type AgentRole,
  type AgentStatus,
  Conversation,
  type ConversationChanges,
  type ConversationEvents,
  describeExit,
  type MessageUpdateEvent,
  type StatusChangeEvent,
} from './conversation.js';
export { AgentSessionError, type AgentSessionErrorCode } from './errors.js';
export { HeadlessScreen, type ScreenSize, type ScreenSnapshot } from './pty/headlessScreen.js';
export { PtyAgentSession, type PtySessionOptions, pasteSequence } from './pty/ptySession.js';
export { resolveCommand, type SpawnOptions, spawnTerminalProgram, type TerminalProgram } from './pty/terminalProgram.js';
export {
  AGENT_TYPES,
  type AgentScreenSpec,
  agentRules,
  bottomBoxStart,
  builtInMessageRules,
  dedent,
  fromLastEcho,
  inferAgentType,
  rulesFor,
} from './rules/agentRules.js';
export { CustomRulesSchema, type CustomRulesSpec, customAgentRules } from './rules/customRules.js';
export {
  ARROW_DOWN,
  ARROW_UP,
  type DetectedDialog,
  type Dialog,
  type DialogScreen,
  detectDialog,
  dialogKeys,
  publicDialog,
} from './rules/dialogs.js';
export {
  claudeRules,
  genericRules,
  inputBoxStart,
  type MessageRules,
  type ScreenChange,
  stripTrailingPrompt,
} from './rules/messageRules.js';
export { newSection, stripEcho, trimBlankLines } from './rules/text.js';
export { type StartAgentSessionOptions, startAgentSession } from './startAgentSession.js';
