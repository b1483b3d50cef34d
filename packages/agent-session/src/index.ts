/**
 * @module @switchyard/agent-session
 * The agent session server: an HTTP API over one interactive agent (a
 * terminal program through node-pty, or an Agent Client Protocol agent) with
 * `/messages`, `/message`, `/status`, `/events` (SSE), `/openapi.json`,
 * `/docs` and `/chat`. The engine without HTTP is the
 * `@switchyard/agent-session/engine` subpath.
 */
export { type AgentSessionServer, type AgentSessionServerOptions, startAgentSessionServer } from './agentSessionServer.js';
export { inferAgentType } from './engine/rules/agentRules.js';
export { CustomRulesSchema, type CustomRulesSpec, customAgentRules } from './engine/rules/customRules.js';
export { DEFAULT_ALLOWED_HOSTS, hostAllowed, parseHost } from './http/access.js';
export { type AgentApi, type AgentApiOptions, createAgentApi } from './http/agentApi.js';
export { EventHub, type EventHubOptions, sseFrame } from './http/eventStream.js';
export {
  AgentMessageSchema,
  AgentStatusSchema,
  DialogSchema,
  ErrorBodySchema,
  MessagesResponseSchema,
  PostDialogBodySchema,
  type PostMessageBody,
  PostMessageBodySchema,
  ScreenResponseSchema,
  type StatusResponse,
  StatusResponseSchema,
  UploadResponseSchema,
} from './http/schemas.js';
export { DEFAULT_UPLOAD_LIMIT_BYTES, safeFileName, storeUpload } from './http/uploads.js';
export { type AgentStateFile, AgentStateWriter, loadAgentState, saveAgentState } from './stateFile.js';
