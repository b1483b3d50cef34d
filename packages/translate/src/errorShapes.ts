/**
 * @module errorShapes
 * Each family's own error body, so a client's SDK raises its own typed
 * exception: OpenAI's `{"error": {message, type, param, code}}`,
 * Anthropic's `{"type": "error", "error": {type, message}}` and Google's
 * `{"error": {code, message, status, details}}` (AIP-193, with the stable
 * Switchyard code in an `ErrorInfo` detail and the wait in a `RetryInfo`).
 * Also the reverse: reading any family's error body an upstream sent.
 */
import { isObject, type Json } from './fields.js';

/** A failure to report, in no family's shape (the relay's `RelayFailure` fits). */
export interface ErrorInfo {
  status: number;
  message: string;
  /** Stable machine-readable code (`all_providers_in_cooldown`, `invalid_request`, …). */
  code: string;
  /** OpenAI-style type (`invalid_request_error`, `rate_limit_error`, …). */
  type?: string;
  param?: string;
  upstreamStatus?: number;
  retryAfterSeconds?: number;
}

/** OpenAI's (chat and Responses) error body. */
export function openAiErrorBody(info: ErrorInfo): Json {
  const error: Json = { message: info.message, type: info.type ?? openAiTypeOf(info.status), param: info.param ?? null, code: info.code };
  if (info.upstreamStatus !== undefined) error.upstream_status = info.upstreamStatus;
  return { error };
}

function openAiTypeOf(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/** Anthropic's error type for an HTTP status (its documented table). */
export function anthropicTypeOf(status: number): string {
  switch (status) {
    case 400:
    case 415:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * The HTTP status an error type stands for, for an error that arrives
 * inside a 200 stream and so carries no status of its own. Anthropic's
 * documented table (its `error` event uses the same types as its error
 * bodies: `overloaded_error` is the 529 a request would have got), plus the
 * few types OpenAI's streams use. Unknown types are `undefined`: the caller
 * keeps its default (500).
 */
export function statusOfErrorType(type: string | undefined): number | undefined {
  return type === undefined ? undefined : ERROR_TYPE_STATUS[type];
}

const ERROR_TYPE_STATUS: Readonly<Record<string, number>> = {
  // Anthropic (docs.claude.com/en/api/errors); OpenAI shares the first five names.
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  rate_limit_error: 429,
  request_too_large: 413,
  api_error: 500,
  overloaded_error: 529,
  // OpenAI's chat and Responses streams.
  server_error: 500,
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
};

/**
 * Anthropic's error body. `code` and `param` are Switchyard additions inside
 * `error`; Anthropic's SDKs keep unknown fields, so callers can read them.
 */
export function anthropicErrorBody(info: ErrorInfo, requestId?: string): Json {
  const error: Json = { type: anthropicTypeOf(info.status), message: info.message, code: info.code };
  if (info.param !== undefined) error.param = info.param;
  const body: Json = { type: 'error', error };
  if (requestId) body.request_id = requestId;
  return body;
}

const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
  // Anthropic's "overloaded": Google's name for a service that cannot take the call now.
  529: 'UNAVAILABLE',
};

/** Google's canonical status name for an HTTP status. */
export function googleStatusOf(status: number): string {
  return GOOGLE_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

/** Gemini's (Google API) error body. */
export function geminiErrorBody(info: ErrorInfo): Json {
  const metadata: Record<string, string> = {};
  if (info.param !== undefined) metadata.field = info.param;
  if (info.upstreamStatus !== undefined) metadata.upstream_status = String(info.upstreamStatus);
  const details: Json[] = [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: info.code.toUpperCase(), domain: 'switchyard', metadata },
  ];
  if (info.retryAfterSeconds !== undefined)
    details.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${info.retryAfterSeconds}s` });
  if (info.param !== undefined) {
    details.push({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: info.param, description: info.message }],
    });
  }
  return { error: { code: info.status, message: info.message, status: googleStatusOf(info.status), details } };
}

/** What an upstream's error body says, whatever its family. */
export interface UpstreamErrorDescription {
  message: string;
  /** The family's own type or status name, when given. */
  type?: string;
  code?: string;
  param?: string;
  /** Google's `RetryInfo.retryDelay`, in milliseconds. */
  retryDelayMs?: number;
}

/** Reads an error body of any family (OpenAI, Anthropic, Google, including Google's one-element array form). */
export function describeUpstreamError(parsed: unknown): UpstreamErrorDescription | undefined {
  const root = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!isObject(root)) return undefined;
  const error = isObject(root.error) ? root.error : root;
  if (typeof error.message !== 'string') return undefined;
  const out: UpstreamErrorDescription = { message: error.message };
  // AWS services name the error in `__type` (`ThrottlingException`, or `namespace#ThrottlingException`).
  const awsType = typeof error.__type === 'string' ? error.__type.split('#').pop() : undefined;
  const type = typeof error.type === 'string' ? error.type : typeof error.status === 'string' ? error.status : awsType;
  if (type) out.type = type;
  if (typeof error.code === 'string') out.code = error.code;
  if (typeof error.param === 'string') out.param = error.param;
  if (Array.isArray(error.details)) {
    for (const detail of error.details) {
      if (!isObject(detail) || typeof detail.retryDelay !== 'string') continue;
      const match = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay);
      if (match) out.retryDelayMs = Math.round(Number(match[1]) * 1000);
    }
  }
  return out;
}
