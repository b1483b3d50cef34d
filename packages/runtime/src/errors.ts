/**
 * @module errors
 * The one error of the runtime primitives, with a stable `code`.
 */

/** Codes of {@link RuntimeError}. */
export type RuntimeErrorCode =
  | 'invalid_argument'
  /** A deadline passed ({@link withTimeout}). */
  | 'timeout'
  /** A body went over its cap ({@link readCappedBody}). */
  | 'too_large'
  /** PostgreSQL could not read, write, listen or migrate. */
  | 'store_failed';

/** Base error of `@switchyard/runtime`. */
export class RuntimeError extends Error {
  override name = 'RuntimeError';
  readonly code: RuntimeErrorCode;

  constructor(code: RuntimeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
