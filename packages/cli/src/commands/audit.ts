/**
 * @module audit
 * `yard audit repair`: fixes a torn last line of `.agileplus/audit.jsonl`
 * (a crash mid-write), which otherwise stops every hidden subcommand,
 * `dispatch`, `mcp` and `serve`. The workflow's `SubcommandAuditLog.repair`
 * does the work (never dropping a complete entry, refusing a log that
 * leads outside the repository); the repair is then recorded in the log it
 * repaired, like any other write, and so is a repair that failed, when the
 * log can take the line.
 */
import { SUBCOMMAND_LOG_PATH, SubcommandAuditLog } from '@switchyard/workflow';
import { emit, errorBody, exitCodeOf } from '../output.js';
import type { CommandContext } from '../program.js';
import type { Runtime } from '../runtime.js';
import { withRuntime } from './shared.js';

/** The command name recorded in the log. */
const COMMAND = 'audit repair';

/** `yard audit repair`. Exit 0 when the log ends with a complete line afterwards (repaired or already whole). */
export function auditRepair(ctx: CommandContext): Promise<number> {
  return withRuntime(ctx, async (rt) => {
    const started = performance.now();
    let repaired: Awaited<ReturnType<typeof SubcommandAuditLog.repair>>;
    try {
      repaired = await SubcommandAuditLog.repair(rt.repoRoot, { repoName: rt.repoName });
    } catch (error) {
      await recordFailure(rt, error, performance.now() - started);
      throw error;
    }
    const entry = await (await rt.auditLog()).record({
      command: COMMAND,
      args: {},
      actor: rt.actor,
      exit_code: 0,
      duration_ms: performance.now() - started,
      result: { action: repaired.action, removed_bytes: repaired.removed_bytes },
    });
    const text =
      repaired.action === 'none'
        ? `${SUBCOMMAND_LOG_PATH}: nothing to repair (${repaired.message})`
        : `${SUBCOMMAND_LOG_PATH}: ${repaired.message} (recorded as audit #${entry.id})`;
    emit(ctx.io, ctx.globals.output, { path: SUBCOMMAND_LOG_PATH, ...repaired, audit_id: entry.id }, { text });
  });
}

/**
 * A failed repair is an invocation like a refused subcommand: it gets its line, with the exit
 * code and the error, when the log can take one (after a lock timeout, once the other writer is
 * done). A log that leads outside the repository, is still torn or stays locked cannot; then the
 * error the caller sees is the only report, and this failure does not replace it.
 */
async function recordFailure(rt: Runtime, error: unknown, durationMs: number): Promise<void> {
  const { code, message } = errorBody(error).error;
  try {
    await (await rt.auditLog()).record({
      command: COMMAND,
      args: {},
      actor: rt.actor,
      exit_code: await exitCodeOf(error),
      duration_ms: durationMs,
      result: { error: { code, message } },
    });
  } catch {
    // Not writable: see above.
  }
}
