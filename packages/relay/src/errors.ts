/**
 * @module relayErrors
 * What the relay tells a client when it cannot deliver an answer, as a
 * stable code plus the HTTP status the servers send. The body's shape is the
 * client family's own (see `ingressFormat`).
 */

/** Client-facing error codes of the data plane. */
export type RelayErrorCode =
  | 'all_providers_in_cooldown'
  | 'no_provider_available'
  | 'no_credentials'
  | 'quota_exceeded'
  | 'upstream_error'
  | 'model_not_found'
  | 'invalid_request'
  | 'invalid_api_key'
  | 'not_found'
  | 'payload_too_large'
  /** Refused by the gateway's access rules (a foreign Host, a cross-site Origin, a caller not on this machine). */
  | 'forbidden'
  /** The client closed the request before its answer (status 499, as Nginx logs it). */
  | 'client_closed'
  /** A runtime client key: past its per-minute request or token rate (429, `Retry-After`). */
  | 'key_rate_limited'
  /** A runtime client key: its budget for the period is spent (429, `Retry-After` at the period's end). */
  | 'key_budget_exceeded'
  /** A runtime client key past its expiry (401). */
  | 'key_expired'
  /** A runtime client key asking for a model outside its list (403). */
  | 'model_not_allowed';

/** A failure to answer a client, ready to be formatted. */
export interface RelayFailure {
  status: number;
  code: RelayErrorCode;
  message: string;
  /** OpenAI-style error type. */
  type: 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'rate_limit_error' | 'server_error' | 'not_found_error';
  /** The upstream's status, for `upstream_error`. */
  upstreamStatus?: number;
  /** Seconds, for `Retry-After`. */
  retryAfterSeconds?: number;
  /** The request field at fault, for `invalid_request`. */
  param?: string;
}
