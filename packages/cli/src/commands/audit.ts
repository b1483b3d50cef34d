/**
 * @module audit
 * `yard audit repair`: fixes a torn last line of `.agileplus/audit.jsonl`
 * (a crash mid-write), which otherwise stops every hidden subcommand,
 * `dispatch`, `mcp` and `serve`. The workflow's `SubcommandAuditLog.repair`
 * does the work (never dropping a complete entry, refusing a log that
 * leads outside the repository); the repair is then recorded in the log it
 * repaired, like any other write.
 */
import { SUBCOMMAND_LOG_PATH, SubcommandAuditLog } from '@switchyard/workflow';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import { withRuntime } from './shared.js';

/** The command name recorded in the log. */
const COMMAND = 'audit repair';

/** `yard audit repair`. Exit 0 when the log ends with a complete line afterwards (repaired or already whole). */
export function auditRepair(ctx: CommandContext): Promise<number> {
  return withRuntime(ctx, async (rt) => {
    const started = performance.now();
    const repaired = await SubcommandAuditLog.repair(rt.repoRoot, { repoName: rt.repoName });
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
