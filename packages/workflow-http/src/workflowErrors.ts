/**
 * @module workflowErrors
 * How the workflow API answers failures: the control plane's one error
 * shape, `{"error": {"code", "message", "details"?}}`, with the workflow's
 * own stable code (the same code the CLI prints and gRPC puts in its
 * details), and one table from workflow codes to HTTP statuses. A refused
 * gate is 409 with `details.violations`; bad input is 422 with
 * `details.field`.
 */

import { ApiError, respondError } from '@switchyard/http-kit';
import { WorkflowError, type WorkflowErrorCode } from '@switchyard/workflow';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';

/** HTTP status of each workflow error code. */
export const WORKFLOW_ERROR_STATUS: Record<WorkflowErrorCode, number> = {
  invalid_argument: 422,
  query_parse_error: 422,
  unsafe_argument: 422,
  path_escape: 422,
  not_found: 404,
  already_exists: 409,
  invalid_transition: 409,
  backward_transition: 409,
  gate_failed: 409,
  conflict: 409,
  cancelled: 409,
  forbidden: 403,
  signature_invalid: 401,
  git_failed: 500,
  store_failed: 500,
  upstream_failed: 502,
  timeout: 504,
  not_implemented: 501,
};

/** What a 415 says: every workflow body is JSON. */
export const JSON_ONLY = 'send the body as application/json';

/** Answers anything a workflow route throws. Internal failures never echo their message. */
export function respondWorkflowError(c: Context, error: unknown): Response {
  if (error instanceof WorkflowError) {
    const status = WORKFLOW_ERROR_STATUS[error.code];
    const message = status >= 500 && error.code !== 'not_implemented' ? `${error.code.replace(/_/g, ' ')}` : error.message;
    const body = { error: { code: error.code, message, ...(error.details && status < 500 ? { details: error.details } : {}) } };
    return c.json(body, status as 400);
  }
  if (error instanceof ApiError) return respondError(c, error.code, error.message, error.details, error.headers);
  if (error instanceof HTTPException) {
    // Hono and zod-openapi raise these for bodies they cannot take: malformed JSON (400), too large (413),
    // not JSON at all (415). They are the client's mistakes, never a 500.
    if (error.status === 413) return respondError(c, 'payload_too_large', error.message);
    if (error.status === 415) return respondError(c, 'unsupported_media_type', JSON_ONLY);
    if (error.status >= 500) return respondError(c, 'internal', 'internal error');
    return respondError(c, 'bad_request', error.message || 'bad request');
  }
  return respondError(c, 'internal', 'internal error');
}
