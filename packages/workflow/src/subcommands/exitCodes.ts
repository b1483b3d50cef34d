/**
 * @module exitCodes
 * The one table from error codes to process exit codes, shared by every
 * surface that exits (the CLI, the dispatch tool). Stable: scripts branch
 * on these numbers.
 */
import { WorkflowError, type WorkflowErrorCode } from '../errors.js';

/** Exit codes. 0 is success; each failure class has its own number. */
export const EXIT_CODES = {
  ok: 0,
  /** An unexpected failure (a bug, I/O trouble, an unreachable upstream). */
  internal: 1,
  /** Bad arguments: unknown option, invalid value, unsafe value, path escape, query syntax. */
  usage: 2,
  /** The feature, work package, job, rule or artifact does not exist. */
  not_found: 3,
  /** Governance gates refused the transition. */
  gate_failed: 4,
  /** The state does not allow it: refused transition, unmet dependency, already exists, git conflict. */
  conflict: 5,
  /** The actor may not do this. */
  forbidden: 6,
} as const;

const BY_CODE: Record<WorkflowErrorCode, number> = {
  invalid_argument: EXIT_CODES.usage,
  query_parse_error: EXIT_CODES.usage,
  unsafe_argument: EXIT_CODES.usage,
  path_escape: EXIT_CODES.usage,
  not_found: EXIT_CODES.not_found,
  gate_failed: EXIT_CODES.gate_failed,
  invalid_transition: EXIT_CODES.conflict,
  backward_transition: EXIT_CODES.conflict,
  conflict: EXIT_CODES.conflict,
  already_exists: EXIT_CODES.conflict,
  forbidden: EXIT_CODES.forbidden,
  signature_invalid: EXIT_CODES.forbidden,
  git_failed: EXIT_CODES.internal,
  store_failed: EXIT_CODES.internal,
  upstream_failed: EXIT_CODES.internal,
  timeout: EXIT_CODES.internal,
  cancelled: EXIT_CODES.internal,
  not_implemented: EXIT_CODES.internal,
};

/**
 * The exit code for an outcome: 0 for success, otherwise by error code.
 *
 * @example
 * ```ts
 * exitCodeFor(new GateFailedError('DOING -> REVIEW', [])); // 4
 * ```
 */
export function exitCodeFor(error: unknown): number {
  if (error === undefined || error === null) return EXIT_CODES.ok;
  return error instanceof WorkflowError ? BY_CODE[error.code] : EXIT_CODES.internal;
}
