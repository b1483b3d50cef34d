/**
 * @module @switchyard/server-http
 * Switchyard's gateway server (`Gateway`, bin `switchyard`): the `/v1/*` data
 * plane on plain node:http with its websocket routes, the management and
 * operations control plane on Hono, and the dashboard and sign-in pages.
 * The agent session server is `@switchyard/agent-session`; the workflow HTTP
 * adapter is `@switchyard/workflow-http`; the shared HTTP kit is
 * `@switchyard/http-kit`.
 */

export {
  ClientKeyGuard,
  type ClientKeyGuardOptions,
  type GuardedKey,
  type KeyAdmission,
  type KeyRefusal,
  looksLikeClientKey,
} from './clientKeys/clientKeyGuard.js';
export {
  BUDGET_PERIODS,
  BUDGET_UNITS,
  type Budget,
  BudgetSchema,
  CLIENT_KEY_PREFIX,
  type ClientKeyRecord,
  ClientKeyRecordSchema,
  type ClientKeyUpdate,
  type ClientKeyView,
  ClientKeyViewSchema,
  CreateClientKeySchema,
  createRecord,
  secretDigest,
  UpdateClientKeySchema,
} from './clientKeys/clientKeyRecord.js';
export {
  type BudgetAnswer,
  type BudgetLedger,
  type BudgetReservation,
  type BudgetUse,
  type ClientKeyStore,
  LocalBudgetLedger,
  MemoryClientKeyStore,
} from './clientKeys/clientKeyStore.js';
export { CLIENT_KEYS_FILE, ClientKeysUnreadableError, FileClientKeyStore } from './clientKeys/fileClientKeyStore.js';
export { PostgresClientKeyStore, type PostgresClientKeyStoreOptions } from './clientKeys/postgresClientKeyStore.js';
export {
  clientAddress,
  isLoopback,
  type ManagementAuthOptions,
  type ManagementDecision,
  type ManagementGuard,
  managementAuth,
} from './controlPlane/managementAuth.js';
export { assertCallableUrl, blockedRange, guardedAgent, guardedLookup, SsrfBlocked, type SsrfPolicy } from './controlPlane/ssrf.js';
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
export { GatewayListenError } from './gateway/listen.js';
export { LogTail } from './gateway/logTail.js';
export { TracingUnavailableError } from './gateway/openTracing.js';
