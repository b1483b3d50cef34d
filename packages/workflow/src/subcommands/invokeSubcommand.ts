/**
 * @module invokeSubcommand
 * The entry the surfaces call: {@link runSubcommand} plus the deprecation
 * warnings of the call (a `legacy:*` subcommand, a renamed argument given
 * under its old name), which go into the outcome and into the call's one
 * audit line.
 */

import type { SubcommandContext, SubcommandRegistry } from './registry.js';
import { runSubcommand, type SubcommandOutcome } from './runSubcommand.js';
import type { SubcommandAuditLog } from './subcommandAuditLog.js';

/** An outcome with the warnings the call drew (absent when none). */
export interface InvokedSubcommand extends SubcommandOutcome {
  warnings?: string[];
}

/**
 * Runs a subcommand as {@link runSubcommand} does (exactly one audit line, never throws for a
 * failed subcommand), with its deprecation warnings in the outcome and in that line.
 *
 * @example
 * ```ts
 * const outcome = await invokeSubcommand(registry, log, 'commit:create', { message: 'm', paths: 'a.ts' }, ctx);
 * outcome.warnings; // ['commit:create: paths is deprecated; use files (--paths is now --files)']
 * ```
 */
export async function invokeSubcommand(
  registry: SubcommandRegistry,
  log: SubcommandAuditLog,
  command: string,
  args: Record<string, unknown>,
  ctx: SubcommandContext,
): Promise<InvokedSubcommand> {
  const warnings = registry.deprecations(command, args);
  const outcome = await runSubcommand(registry, log.withWarnings(warnings), command, args, ctx);
  return warnings.length > 0 ? { ...outcome, warnings } : outcome;
}
