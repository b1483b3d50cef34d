/**
 * @module @switchyard/workflow-http
 * The feature workflow over HTTP: a Hono app (`createWorkflowApi`) with
 * features, work packages, governance, audit and dispatch routes and an
 * OpenAPI document, and a ready server (`startWorkflowHttpServer`) that
 * `yard serve --http` runs.
 */
export { createWorkflowApi, type MetricsSource, type WorkflowApiOptions } from './workflowApi.js';
export { respondWorkflowError, WORKFLOW_ERROR_STATUS } from './workflowErrors.js';
export { startWorkflowHttpServer, type WorkflowHttpServer, type WorkflowHttpServerOptions } from './workflowServer.js';
