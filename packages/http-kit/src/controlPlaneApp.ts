/**
 * @module controlPlaneApp
 * The one app factory and validation hook of every control plane (the
 * gateway's management and operations APIs, the workflow API and the agent
 * session API), so the same bad input gets the same answer everywhere: a body
 * that parses but breaks the schema is 422 `validation_failed`, a bad path or
 * query parameter is 400 `bad_request`, and both name the first failing field
 * in the message and every issue in `details: {field, issues}`.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Env } from 'hono';
import { type FieldDetails, fieldDetails, fieldIssues, respondError } from './apiError.js';

/** What `@hono/zod-openapi` hands a validation hook (the parts read here). */
export interface ValidationResult {
  success: boolean;
  target?: string;
  error?: { issues: readonly { path: readonly PropertyKey[]; message: string; code?: string; keys?: readonly string[] }[] };
}

/**
 * The control planes' validation hook: answers a failed validation in the
 * standard error shape, and lets a valid request through.
 */
export function validationHook(result: ValidationResult, c: Context): Response | undefined {
  if (result.success || !result.error) return undefined;
  const issues = fieldIssues(result.error.issues);
  const first = issues[0] ?? { field: '(body)', message: 'invalid' };
  const details: FieldDetails = fieldDetails(issues);
  // A body that parses but breaks the rules is 422; a bad path, query or header value is 400.
  const bodyTargets = new Set(['json', 'form']);
  return respondError(
    c,
    bodyTargets.has(result.target ?? 'json') ? 'validation_failed' : 'bad_request',
    `${first.field}: ${first.message}`,
    details,
  );
}

/**
 * A control-plane Hono app with the shared validation hook.
 *
 * @example
 * ```ts
 * const app = createControlPlaneApp();
 * app.openapi(route, (c) => c.json(c.req.valid('json')));
 * ```
 */
export function createControlPlaneApp<E extends Env = Env>(): OpenAPIHono<E> {
  return new OpenAPIHono<E>({ defaultHook: validationHook as never });
}
