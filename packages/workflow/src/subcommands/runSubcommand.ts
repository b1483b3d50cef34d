/**
 * @module runSubcommand
 * The audited runner every surface calls (CLI, dispatch tool, MCP, HTTP,
 * gRPC): one invocation, exactly one audit line.
 */
import { asWorkflowError, type WorkflowError } from '../errors.js';
import { exitCodeFor } from './exitCodes.js';
import type { SubcommandContext, SubcommandDefinition, SubcommandRegistry } from './registry.js';
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
 * Only arguments that parsed against the subcommand's schema are logged; a
 * refused call is logged with its refusal and no arguments. A run first
 * journals its intent ({@link SubcommandAuditLog.begin}): when that cannot be
 * written, nothing runs and this throws. A record that cannot be appended
 * after the run (a lock timeout) throws too, but stays journalled and is
 * appended later (see {@link SubcommandAuditLog.finish}).
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
  let parsed: Record<string, unknown>;
  let run: SubcommandDefinition['run'];
  try {
    run = registry.get(command).run;
    parsed = registry.parseArgs(command, args);
  } catch (refusal) {
    const error = asWorkflowError(refusal);
    const exitCode = exitCodeFor(refusal);
    const entry = await log.record({
      command,
      args: {},
      actor: ctx.actor,
      exit_code: exitCode,
      duration_ms: performance.now() - started,
      result: { error: { code: error.code, message: error.message } },
    });
    return failed(command, exitCode, entry, error);
  }
  const intent = await log.begin({ command, args: parsed, actor: ctx.actor });
  let result: unknown;
  let failure: unknown;
  try {
    result = await run(ctx, parsed);
  } catch (error) {
    failure = error;
  }
  const duration = performance.now() - started;
  const exitCode = exitCodeFor(failure);
  const error = failure === undefined ? undefined : asWorkflowError(failure, 'store_failed');
  // A failed run's line says why, as a refused one's does (`result.error`): the log alone tells them apart.
  const entry = await log.finish(intent, {
    exit_code: exitCode,
    duration_ms: duration,
    ...(error ? { result: { error: { code: error.code, message: error.message } } } : {}),
  });
  if (error !== undefined) return failed(command, exitCode, entry, error);
  return { command, exit_code: exitCode, duration_ms: entry.duration_ms as number, audit: entry, result };
}

function failed(command: string, exitCode: number, entry: Record<string, unknown>, error: WorkflowError): SubcommandOutcome {
  return {
    command,
    exit_code: exitCode,
    duration_ms: entry.duration_ms as number,
    audit: entry,
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
  };
}
