/**
 * @module errors
 * One base error for the package, with a stable snake_case `code` that the
 * servers map to HTTP statuses in one table. Messages name the field or the
 * credential id that failed, never a token: every message here is safe to
 * log and to return to a client.
 */

/** Codes of {@link CredentialsError}. */
export type CredentialsErrorCode =
  /** No credential of the provider can serve a request. */
  | 'no_credentials'
  /** No credential has this id. */
  | 'credential_not_found'
  /** A credential with this id already exists (on add). */
  | 'credential_exists'
  /** A write lost a race: the stored revision is not the one expected. */
  | 'revision_conflict'
  /** Input failed validation; `field` names it. */
  | 'invalid_credential'
  | 'invalid_argument'
  | 'invalid_config'
  /** A credential file or name would leave the auth directory. */
  | 'path_not_allowed'
  /** The encryption key is not 32 bytes of base64 or hex. */
  | 'invalid_key'
  /** Decryption failed: wrong key, or the file was changed. */
  | 'decryption_failed'
  /** A store could not read or write. */
  | 'store_failed'
  /** Another process holds the auth directory: a rekey beside a running store, or a store beside a running rekey. */
  | 'in_use'
  /** A rekey ended with credentials still under another key (a node still writes with the old one): run it again. */
  | 'rekey_incomplete'
  /** A refresh failed (transient: it is retried with backoff). */
  | 'refresh_failed'
  /** The authorization server rejected the refresh token: sign in again. */
  | 'refresh_rejected'
  /** A refresh is not attempted before `retryAt`, after earlier failures. */
  | 'refresh_backoff'
  /** The credential cannot be refreshed (an API key, or no flow for it). */
  | 'not_refreshable'
  /** RFC 8628: the user denied the sign-in. */
  | 'access_denied'
  /** RFC 8628: the device code expired before the user finished. */
  | 'expired_token'
  /** The authorization server answered something the flow cannot use. */
  | 'authorization_failed'
  /** A sign-in or flow name that is not registered. */
  | 'flow_not_found'
  /** A bounded resource is full (sign-ins pending at once): retry once one ends. */
  | 'too_many_pending'
  /** The operation was cancelled by its caller. */
  | 'aborted'
  /** The component is closed. */
  | 'closed'
  | 'not_implemented';

/** One failed field of a validation. Messages never quote the input value. */
export interface FieldIssue {
  field: string;
  message: string;
}

/**
 * Base error of `@switchyard/credentials`.
 *
 * @example
 * ```ts
 * try { await manager.update('openai-1', { priority: -1 }); }
 * catch (error) { if (error instanceof CredentialsError) console.log(error.code, error.field); }
 * ```
 */
export class CredentialsError extends Error {
  override name = 'CredentialsError';
  readonly code: CredentialsErrorCode;
  /** The input field that failed, as a dotted path (`quota.limit`), when one did. */
  readonly field: string | undefined;
  /** Every validation problem, when there were several (for a 422 body's `details`). */
  readonly issues: readonly FieldIssue[] | undefined;

  constructor(code: CredentialsErrorCode, message: string, options?: { cause?: unknown; field?: string; issues?: readonly FieldIssue[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.field = options?.field ?? options?.issues?.[0]?.field;
    this.issues = options?.issues;
  }
}

/**
 * No credential of `provider` can take a request right now. When every one
 * left is cooling down, `retryAt` (epoch ms) is when the first returns;
 * servers turn it into `Retry-After`.
 *
 * @example
 * ```ts
 * try { pool.acquire(); } catch (e) { if (e instanceof NoCredentials) reply(503, e.retryAt); }
 * ```
 */
export class NoCredentials extends CredentialsError {
  override name = 'NoCredentials';
  readonly provider: string;
  readonly retryAt: number | undefined;

  constructor(provider: string, detail: string, retryAt?: number, options?: { cause?: unknown }) {
    super('no_credentials', `no credential of provider ${JSON.stringify(provider)} is available: ${detail}`, options);
    this.provider = provider;
    this.retryAt = retryAt;
  }
}

/** A credential id that no store or pool knows. */
export class CredentialNotFound extends CredentialsError {
  override name = 'CredentialNotFound';
  readonly credentialId: string;

  constructor(credentialId: string) {
    super('credential_not_found', `no credential has id ${JSON.stringify(credentialId)}`);
    this.credentialId = credentialId;
  }
}

/** A conditional write whose expected revision is no longer current. */
export class RevisionConflict extends CredentialsError {
  override name = 'RevisionConflict';
  readonly credentialId: string;
  /** The revision the writer expected; null when it expected no credential (a create). */
  readonly expected: number | null;
  readonly actual: number | null;

  constructor(credentialId: string, expected: number | null, actual: number | null) {
    super(
      'revision_conflict',
      expected === null
        ? `credential ${JSON.stringify(credentialId)} already exists (revision ${actual})`
        : `credential ${JSON.stringify(credentialId)} is at revision ${actual ?? 'none (deleted)'}, not ${expected}: it changed meanwhile`,
    );
    this.credentialId = credentialId;
    this.expected = expected;
    this.actual = actual;
  }
}
