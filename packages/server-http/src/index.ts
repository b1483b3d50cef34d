/**
 * @module @switchyard/server-http
 * Switchyard's reference HTTP servers: the gateway's data plane (the `/v1/*`
 * relay routes on plain node:http) and the agent session server
 * (`startAgentSessionServer`). The agent engine without HTTP is the
 * `@switchyard/server-http/agent` subpath.
 */

export {
  type AgentSessionServer,
  type AgentSessionServerOptions,
  startAgentSessionServer,
} from './agent/agentSessionServer.js';
export { DEFAULT_ALLOWED_HOSTS, hostAllowed, parseHost } from './agent/http/access.js';
export { type AgentApi, type AgentApiOptions, createAgentApi } from './agent/http/agentApi.js';
export { EventHub, type EventHubOptions, sseFrame } from './agent/http/eventStream.js';
export {
  AgentMessageSchema,
  AgentStatusSchema,
  ErrorBodySchema,
  MessagesResponseSchema,
  type PostMessageBody,
  PostMessageBodySchema,
  ScreenResponseSchema,
  type StatusResponse,
  StatusResponseSchema,
  UploadResponseSchema,
} from './agent/http/schemas.js';
export { DEFAULT_UPLOAD_LIMIT_BYTES, safeFileName, storeUpload } from './agent/http/uploads.js';
export { ApiKeySet, presentedKey } from './dataPlane/apiKeys.js';
export { createDataPlane, type DataPlane, type DataPlaneOptions, requestIdOf } from './dataPlane/dataPlane.js';
export { BodyTooLarge, readBody } from './dataPlane/readBody.js';
