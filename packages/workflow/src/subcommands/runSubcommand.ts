/**
 * @module runSubcommand
 * The audited runner every surface calls (CLI, dispatch tool, MCP, HTTP,
 * gRPC): one invocation, exactly one audit line.
 */
import { asWorkflowError } from '../errors.js';
import { exitCodeFor } from './exitCodes.js';
import type { SubcommandContext, SubcommandRegistry } from './registry.js';
import type { SubcommandAuditLog } from './subcommandAuditLog.js';

/** The outcome of an audited invocation. */
export interface SubcommandOutcome {
  command: string;
  exit_code: number;
  duration_ms: number;
  result?: unknown;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  /** The line written to `.agileplus/audit.jsonl`. */
  audit: Record<string, unknown>;
}

/**
 * Runs a subcommand and writes exactly one line to the subcommand audit
 * log, whatever the outcome (including unknown subcommands and bad
 * arguments). Never throws for a failed subcommand: the outcome says.
 *
 * @example
 * ```ts
 * const outcome = await runSubcommand(registry, auditLog, 'branch:create', { name: 'x' }, ctx);
 * process.exitCode = outcome.exit_code;
 * ```
 */
export async function runSubcommand(
  registry: SubcommandRegistry,
  log: SubcommandAuditLog,
  command: string,
  args: Record<string, unknown>,
  ctx: SubcommandContext,
): Promise<SubcommandOutcome> {
  const started = performance.now();
  let result: unknown;
  let failure: unknown;
  try {
    result = await registry.invoke(command, args, ctx);
  } catch (error) {
    failure = error;
  }
  const duration = performance.now() - started;
  const exitCode = exitCodeFor(failure);
  const error = failure === undefined ? undefined : asWorkflowError(failure, 'store_failed');
  // A failed run's line says why, as a refused one's does (`result.error`): the log alone tells them apart.
  const entry = await log.record({
    command,
    args,
    actor: ctx.actor,
    exit_code: exitCode,
    duration_ms: duration,
    ...(error ? { result: { error: { code: error.code, message: error.message } } } : {}),
  });
  const outcome: SubcommandOutcome = { command, exit_code: exitCode, duration_ms: entry.duration_ms as number, audit: entry };
  if (error === undefined) outcome.result = result;
  else outcome.error = { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
  return outcome;
}
