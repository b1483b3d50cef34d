/**
 * @module errors
 * One base error for the package, with a stable snake_case `code` that the
 * servers map to HTTP statuses in one table.
 */

/** Codes of {@link ObservabilityError}. */
export type ObservabilityErrorCode =
  | 'invalid_config'
  | 'invalid_expression'
  | 'invalid_argument'
  | 'notification_failed'
  | 'missing_dependency'
  | 'not_started';

/**
 * Base error of `@switchyard/observability`.
 *
 * @example
 * ```ts
 * try { parseCondition('error_rate >'); } catch (e) { if (e instanceof ObservabilityError) console.log(e.code); }
 * ```
 */
export class ObservabilityError extends Error {
  override name = 'ObservabilityError';
  readonly code: ObservabilityErrorCode;

  constructor(code: ObservabilityErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * An alert condition that does not parse or does not type-check. `position`
 * is the 0-based character offset of the problem in `source`.
 */
export class InvalidExpression extends ObservabilityError {
  override name = 'InvalidExpression';
  readonly source: string;
  readonly position: number;

  constructor(source: string, position: number, problem: string) {
    super('invalid_expression', `${problem} at column ${position + 1} of ${JSON.stringify(source)}`);
    this.source = source;
    this.position = position;
  }
}

/**
 * A notifier could not deliver. `retryable` says whether sending again may
 * help (network errors, 429, 5xx) or not (a 400 means the payload or key is
 * wrong, and will stay wrong).
 */
export class NotificationFailed extends ObservabilityError {
  override name = 'NotificationFailed';
  readonly channel: string;
  readonly retryable: boolean;
  readonly status: number | null;

  constructor(channel: string, message: string, options: { retryable: boolean; status?: number | null; cause?: unknown }) {
    super('notification_failed', `${channel}: ${message}`, { cause: options.cause });
    this.channel = channel;
    this.retryable = options.retryable;
    this.status = options.status ?? null;
  }
}
