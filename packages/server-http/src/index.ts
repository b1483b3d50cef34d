/**
 * @module @switchyard/server-http
 * Switchyard's reference HTTP servers: the gateway (`Gateway`, bin
 * `switchyard`: the `/v1/*` data plane on plain node:http with its
 * websocket routes, the control plane on Hono) and the agent session server (`startAgentSessionServer`).
 * The agent engine without HTTP is the `@switchyard/server-http/agent`
 * subpath.
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
export {
  API_ERROR_STATUS,
  ApiError,
  type ApiErrorCode,
  errorBody,
  type FieldIssue,
  fieldIssues,
  respondError,
} from './controlPlane/apiError.js';
export { continueWhenBodyIsRead, sendContinueOnFirstRead } from './controlPlane/expectContinue.js';
export {
  clientAddress,
  isLoopback,
  type ManagementAuthOptions,
  type ManagementDecision,
  type ManagementGuard,
  managementAuth,
} from './controlPlane/managementAuth.js';
export { assertCallableUrl, blockedRange, guardedAgent, guardedLookup, SsrfBlocked, type SsrfPolicy } from './controlPlane/ssrf.js';
export { ApiKeySet, presentedKey } from './dataPlane/apiKeys.js';
export { createDataPlane, type DataPlane, type DataPlaneOptions, requestIdOf } from './dataPlane/dataPlane.js';
export { BodyTooLarge, readBody } from './dataPlane/readBody.js';
export { serveWithoutUpgrade } from './dataPlane/serveWithoutUpgrade.js';
export {
  isWebsocketUpgrade,
  type ManagementCheck,
  type UpgradeDecision,
  WEBSOCKET_ROUTES,
  type WebsocketRoute,
} from './dataPlane/websocket/upgradeGate.js';
export {
  createWebsocketGateway,
  DEFAULT_WEBSOCKET_SETTINGS,
  type WebsocketGateway,
  type WebsocketGatewayOptions,
  type WebsocketSettings,
} from './dataPlane/websocket/websocketGateway.js';
export type { RuntimeCredentials, WebsocketEventMap } from './dataPlane/websocket/wsConnection.js';
export {
  type AuthDeleteMessage,
  AuthDeleteMessageSchema,
  type AuthUpsertMessage,
  AuthUpsertMessageSchema,
  CLIENT_MESSAGE_TYPES,
  ResponseCreateMessageSchema,
  WsCredentialSchema,
  WsRequestIdSchema,
} from './dataPlane/websocket/wsMessages.js';
export { type ClusterStatus, ClusterUnavailableError, GatewayCluster } from './gateway/cluster.js';
export { ConfigError, loadConfigFile, type ParseConfigOptions, parseConfig } from './gateway/config/load.js';
export { redactConfig } from './gateway/config/persist.js';
export {
  type GatewayConfig,
  type GatewayConfigInput,
  gatewayConfigJsonSchema,
  gatewayConfigSchema,
  OAUTH_PRESETS,
  oauthFlowName,
  type ProviderBlock,
  type ProviderOAuth,
  providerSchema,
} from './gateway/config/schema.js';
export {
  CloudSignInRequestSchema,
  configuredFlows,
  flowKinds,
  PlainSignInRequestSchema,
  type SignInRequest,
  signInRequest,
} from './gateway/flows.js';
export { Gateway, type GatewayOptions, isLoopbackHost, UnsafeBindError } from './gateway/gateway.js';
export { FileGuardedHostStore, type GuardedHostStore, GuardedHostsUnreadableError } from './gateway/guardedHostStore.js';
export { LogTail } from './gateway/logTail.js';
export { TracingUnavailableError } from './gateway/openTracing.js';
export { createWorkflowApi, type MetricsSource, type WorkflowApiOptions } from './workflow/workflowApi.js';
export { respondWorkflowError, WORKFLOW_ERROR_STATUS } from './workflow/workflowErrors.js';
export { startWorkflowHttpServer, type WorkflowHttpServer, type WorkflowHttpServerOptions } from './workflow/workflowServer.js';
