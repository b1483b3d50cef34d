/**
 * @module @switchyard/http-kit
 * What every Switchyard control plane shares, so the same bad input gets the
 * same answer from the gateway, the workflow API and the agent session
 * server: one error body shape and its status table, body caps, 405/404
 * answers, `Expect: 100-continue` handling and client API keys.
 */

export {
  AccessPolicy,
  type AccessPolicyOptions,
  type AccessRefusal,
  type AccessRequest,
  type Authorization,
  assertSafeBind,
  isLoopbackAddress,
  isLoopbackHost,
  openLoopbackWarning,
  parseHostHeader,
  rateLimitedWarning,
  UnsafeBindError,
  untrustedForwardWarning,
} from './accessPolicy.js';
export { methodNotAllowedOrNotFound } from './allowedMethods.js';
export {
  API_ERROR_STATUS,
  ApiError,
  type ApiErrorCode,
  errorBody,
  type FieldDetails,
  type FieldIssue,
  fieldDetail,
  fieldDetails,
  fieldIssues,
  respondError,
} from './apiError.js';
export { ApiKeySet, type ClientKey, type ClientKeyEntry, type KeyIdentity, keyDigest, presentedKey } from './apiKeys.js';
export { bodyCap } from './bodyCap.js';
export { createControlPlaneApp, type ValidationResult, validationHook } from './controlPlaneApp.js';
export { continueWhenBodyIsRead, sendContinueOnFirstRead } from './expectContinue.js';
