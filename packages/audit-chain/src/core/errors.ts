/**
 * @module errors
 * The package's one error class. Every failure that is the caller's to
 * handle carries a stable string `code`, so that tools can branch on it
 * without parsing messages.
 */

/** Codes for errors thrown by the library (not verification outcomes). */
export type AuditChainErrorCode =
  | 'INVALID_JSON_VALUE'
  | 'INVALID_ENTRY'
  | 'INVALID_ORIGIN'
  | 'INVALID_ARGUMENT'
  | 'INVALID_NOTE'
  | 'INVALID_KEY'
  | 'STORE_FAILED'
  | 'TORN_TAIL'
  | 'LOCK_TIMEOUT'
  | 'OUT_OF_RANGE';

/**
 * Thrown by the library for misuse or I/O trouble. Verification never throws
 * for a bad chain: it returns a result with an error code instead.
 *
 * @example
 * ```ts
 * try { canonicalize({ n: Number.NaN }); }
 * catch (error) { if (error instanceof AuditChainError) console.log(error.code); }
 * ```
 */
export class AuditChainError extends Error {
  override readonly name = 'AuditChainError';
  readonly code: AuditChainErrorCode;

  constructor(code: AuditChainErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
