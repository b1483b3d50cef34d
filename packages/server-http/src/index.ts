/**
 * @module @switchyard/server-http
 * Switchyard's reference HTTP servers. This release has the gateway's data
 * plane: the `/v1/*` relay routes on plain node:http.
 */
export { ApiKeySet, presentedKey } from './dataPlane/apiKeys.js';
export { createDataPlane, type DataPlane, type DataPlaneOptions, requestIdOf } from './dataPlane/dataPlane.js';
export { BodyTooLarge, readBody } from './dataPlane/readBody.js';
export { createWorkflowApi, type MetricsSource, type WorkflowApiOptions } from './workflow/workflowApi.js';
export { respondWorkflowError, WORKFLOW_ERROR_STATUS } from './workflow/workflowErrors.js';
export { startWorkflowHttpServer, type WorkflowHttpServer, type WorkflowHttpServerOptions } from './workflow/workflowServer.js';
