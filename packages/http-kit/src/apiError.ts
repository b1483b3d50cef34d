/**
 * @module apiError
 * The control plane's one error shape, `{"error": {"code", "message",
 * "details"?}}`, and the one table that maps codes to HTTP statuses. Every
 * route (management, operations, workflow, agent) answers errors this way.
 */
import type { Context } from 'hono';

/** Stable codes of control-plane errors. */
export type ApiErrorCode =
  | 'bad_request'
  | 'validation_failed'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'provider_not_found'
  | 'credential_not_found'
  | 'flow_not_found'
  | 'session_not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'too_many_requests'
  | 'bad_gateway'
  | 'gateway_timeout'
  | 'not_implemented'
  | 'service_unavailable'
  | 'internal';

/** HTTP status of each code. */
export const API_ERROR_STATUS: Record<ApiErrorCode, number> = {
  bad_request: 400,
  validation_failed: 422,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  provider_not_found: 404,
  credential_not_found: 404,
  flow_not_found: 404,
  session_not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  bad_gateway: 502,
  gateway_timeout: 504,
  not_implemented: 501,
  service_unavailable: 503,
  internal: 500,
};

/** A field that failed validation. */
export interface FieldIssue {
  /** Dotted path of the field (`providers.openai.base_url`), or `(body)`. */
  field: string;
  message: string;
}

/**
 * An error a control-plane handler throws; the error handler turns it into
 * the standard body.
 *
 * @example
 * ```ts
 * throw new ApiError('provider_not_found', `provider ${name} is not configured`);
 * ```
 */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ApiErrorCode;
  readonly details: unknown;
  readonly headers: Record<string, string>;

  constructor(code: ApiErrorCode, message: string, options: { details?: unknown; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return API_ERROR_STATUS[this.code];
  }
}

/** The standard error body. */
export function errorBody(
  code: ApiErrorCode,
  message: string,
  details?: unknown,
): { error: { code: ApiErrorCode; message: string; details?: unknown } } {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}

/** Writes an error response on a Hono context. */
export function respondError(
  c: Context,
  code: ApiErrorCode,
  message: string,
  details?: unknown,
  headers: Record<string, string> = {},
): Response {
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
  return c.json(errorBody(code, message, details), API_ERROR_STATUS[code] as 400);
}

/** The `details` of an error about fields: the first failing field, and every issue. */
export interface FieldDetails {
  field: string;
  issues: FieldIssue[];
}

/** {@link FieldDetails} from a list of issues (the first one is `field`). */
export function fieldDetails(issues: readonly FieldIssue[]): FieldDetails {
  return { field: issues[0]?.field ?? '(body)', issues: [...issues] };
}

/** {@link FieldDetails} for one field. */
export function fieldDetail(field: string, message: string): FieldDetails {
  return { field, issues: [{ field, message }] };
}

/**
 * Field issues from zod issues (zod 3 and 4 share this shape). An unknown
 * key is reported at the key itself, so the message points at the typo.
 */
export function fieldIssues(
  issues: readonly { path: readonly PropertyKey[]; message: string; code?: string; keys?: readonly string[] }[],
): FieldIssue[] {
  return issues.flatMap((issue) => {
    const base = issue.path.map((part) => String(part));
    if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
      return issue.keys.map((key) => ({ field: [...base, key].join('.'), message: `unknown key ${JSON.stringify(key)}` }));
    }
    return [{ field: base.length === 0 ? '(body)' : base.join('.'), message: issue.message }];
  });
}
