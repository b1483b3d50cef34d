/**
 * @module errors
 * The package's one base error. Every failure a caller can act on carries a
 * stable snake_case `code`; the CLI, HTTP and gRPC surfaces map codes to exit
 * codes and statuses in one table each, so they never parse messages.
 */

/** Codes of {@link WorkflowError}. Stable: surfaces and tools branch on them. */
export type WorkflowErrorCode =
  /** Bad input; `details.field` names the field. */
  | 'invalid_argument'
  /** A feature, work package, job, rule or item that does not exist. */
  | 'not_found'
  /** A slug, sequence or id that is already taken. */
  | 'already_exists'
  /** The state machine does not allow the move (including a skip without force). */
  | 'invalid_transition'
  /** A move backwards in the feature lifecycle. */
  | 'backward_transition'
  /** The state machine allows the move but governance gates fail; `details.violations` lists why. */
  | 'gate_failed'
  /** The actor may not do this (for example `enforce` by a non-admin). */
  | 'forbidden'
  /** Concurrent change, unmet dependency or a sync conflict. */
  | 'conflict'
  /** An `audit:query` expression that does not parse; `details.column` points at the problem. */
  | 'query_parse_error'
  /** An argument that looks like an option, or a ref git refuses. */
  | 'unsafe_argument'
  /** A path that leaves its root (`..`, absolute, symlink escape). */
  | 'path_escape'
  /** `git` exited non-zero. */
  | 'git_failed'
  /** A store failed or holds inconsistent data. */
  | 'store_failed'
  /** A remote service (gateway, tracker, code host, agent session) failed or answered nonsense. */
  | 'upstream_failed'
  /** A webhook whose signature does not verify. */
  | 'signature_invalid'
  /** Something ran out of time. */
  | 'timeout'
  /** Cancelled by the caller. */
  | 'cancelled'
  /** A deliberately unsupported operation. */
  | 'not_implemented';

/** One governance violation, as `governance:check` reports it. */
export interface Violation {
  rule_id: string;
  message: string;
  remediation: string;
}

/**
 * Base error of `@switchyard/workflow`.
 *
 * @example
 * ```ts
 * try { await workflow.transitionFeature('login', { to: 'SHIPPED', actor: 'alice' }); }
 * catch (error) { if (error instanceof WorkflowError && error.code === 'gate_failed') console.log(error.details); }
 * ```
 */
export class WorkflowError extends Error {
  override name = 'WorkflowError';
  readonly code: WorkflowErrorCode;
  /** Machine-readable context: the failing field, violations, positions. Never secrets. */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: WorkflowErrorCode, message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options?.details;
  }
}

/** Bad input for a named field. */
export class InvalidArgumentError extends WorkflowError {
  override name = 'InvalidArgumentError';
  readonly field: string;

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super('invalid_argument', `${field}: ${message}`, { ...options, details: { field } });
    this.field = field;
  }
}

/** Something named does not exist. */
export class NotFoundError extends WorkflowError {
  override name = 'NotFoundError';

  constructor(what: string, key: string | number) {
    super('not_found', `${what} ${JSON.stringify(key)} does not exist`, { details: { what, key } });
  }
}

/**
 * A transition the state machine allows but governance refuses. The
 * violations say which rule failed, why, and what to do about it.
 */
export class GateFailedError extends WorkflowError {
  override name = 'GateFailedError';
  readonly violations: Violation[];
  readonly transition: string;

  constructor(transition: string, violations: Violation[]) {
    super('gate_failed', `governance gates refuse ${transition}: ${violations.map((v) => v.rule_id).join(', ')}`, {
      details: { transition, violations },
    });
    this.violations = violations;
    this.transition = transition;
  }
}

/** Wraps anything thrown into a `WorkflowError`, keeping the original as `cause`. */
export function asWorkflowError(error: unknown, code: WorkflowErrorCode = 'store_failed'): WorkflowError {
  if (error instanceof WorkflowError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new WorkflowError(code, message, { cause: error });
}
