/**
 * @module @switchyard/server-http
 * Switchyard's reference HTTP servers. This release has the gateway's data
 * plane: the `/v1/*` relay routes on plain node:http.
 */

export {
  API_ERROR_STATUS,
  ApiError,
  type ApiErrorCode,
  errorBody,
  type FieldIssue,
  fieldIssues,
  respondError,
} from './controlPlane/apiError.js';
export { clientAddress, isLoopback, type ManagementAuthOptions, managementAuth } from './controlPlane/managementAuth.js';
export { assertCallableUrl, blockedRange, guardedAgent, guardedLookup, SsrfBlocked, type SsrfPolicy } from './controlPlane/ssrf.js';
export { ApiKeySet, presentedKey } from './dataPlane/apiKeys.js';
export { createDataPlane, type DataPlane, type DataPlaneOptions, requestIdOf } from './dataPlane/dataPlane.js';
export { BodyTooLarge, readBody } from './dataPlane/readBody.js';
export { ConfigError, loadConfigFile, type ParseConfigOptions, parseConfig } from './gateway/config/load.js';
export { redactConfig } from './gateway/config/persist.js';
export {
  type GatewayConfig,
  type GatewayConfigInput,
  gatewayConfigSchema,
  type ProviderBlock,
  providerSchema,
} from './gateway/config/schema.js';
export { Gateway, type GatewayOptions, isLoopbackHost, UnsafeBindError } from './gateway/gateway.js';
export { LogTail } from './gateway/logTail.js';
