/**
 * @module errors
 * The CLI's one base error, for failures the CLI itself finds (a bad
 * global option, an unreadable config file, a missing optional module).
 * Failures of the workflow domain stay `WorkflowError`s; both carry a
 * string `code` that maps to one documented exit code.
 */

/** Codes of {@link CliError}; each has a stable exit code ({@link CLI_EXIT_CODES}). */
export type CliErrorCode = 'invalid_argument' | 'not_found' | 'already_exists' | 'not_implemented' | 'internal' | 'audit_log_torn';

/** Exit codes (the same numbers as `@switchyard/workflow`'s `EXIT_CODES`, kept here so `--help` loads nothing else). */
export const CLI_EXIT_CODES = {
  ok: 0,
  internal: 1,
  usage: 2,
  not_found: 3,
  gate_failed: 4,
  conflict: 5,
  forbidden: 6,
} as const;

const EXIT_BY_CODE: Record<CliErrorCode, number> = {
  invalid_argument: CLI_EXIT_CODES.usage,
  not_found: CLI_EXIT_CODES.not_found,
  already_exists: CLI_EXIT_CODES.conflict,
  not_implemented: CLI_EXIT_CODES.internal,
  internal: CLI_EXIT_CODES.internal,
  // A store failure like any other (exit 1); its own code so scripts can run `yard audit repair`.
  audit_log_torn: CLI_EXIT_CODES.internal,
};

/**
 * An error of the `yard` command line.
 *
 * @example
 * ```ts
 * throw new CliError('invalid_argument', '--output: expected json, table or markdown', { field: 'output' });
 * ```
 */
export class CliError extends Error {
  override name = 'CliError';
  readonly code: CliErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: CliErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = details;
  }

  get exitCode(): number {
    return EXIT_BY_CODE[this.code];
  }
}
