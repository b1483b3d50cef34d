/**
 * @module subcommand
 * Hidden subcommands: `yard <category>:<action> [--name value …]`. They
 * never appear in `yard --help`; `yard <name> --help` describes one. Every
 * invocation, including unknown names and bad arguments, writes exactly one
 * hash-chained line to `.agileplus/audit.jsonl` through the workflow's
 * `invokeSubcommand`, and so does one refused before it could run, wherever a
 * log can be opened (`subcommandRefusal`). A deprecated argument name or a
 * `legacy:*` subcommand prints a warning on stderr, and its line records it.
 */
import {
  BUILTIN_SUBCOMMANDS,
  invokeSubcommand,
  type SubcommandAuditLog,
  type SubcommandDefinition,
  SubcommandRegistry,
  toResult,
} from '@switchyard/workflow';
import type { z } from 'zod';
import { type ArgKind, parseSubcommandArgs, scanGlobals } from '../argv.js';
import { CliError } from '../errors.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { emit, exitCodeOf, type Presentation, render, reportError } from '../output.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { type RefusedInvocation, recordRefusal } from './subcommandRefusal.js';

/** How each argument reads on a command line, from its zod schema. */
export function argKind(schema: z.ZodType): ArgKind {
  let def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  while (def.type === 'default' || def.type === 'optional' || def.type === 'nullable' || def.type === 'prefault')
    def = (def.innerType as { _zod: { def: Record<string, unknown> } })._zod.def;
  if (def.type === 'pipe') def = (def.out as { _zod: { def: Record<string, unknown> } })._zod.def;
  if (def.type === 'boolean') return 'boolean';
  if (def.type === 'array') return 'list';
  return 'value';
}

function kindsOf(def: SubcommandDefinition | undefined): (key: string) => ArgKind | undefined {
  if (!def) return () => undefined;
  const shape = def.args.shape as Record<string, z.ZodType>;
  return (key) => {
    const name = key.replace(/-/g, '_');
    const schema = shape[def.aliases[name] ?? name];
    return schema ? argKind(schema) : undefined;
  };
}

/** Help for one subcommand: its arguments, which are required, and their defaults. */
export function subcommandHelp(registry: SubcommandRegistry, name: string): string {
  const d = registry.describe(name);
  const lines = [
    `Usage: yard ${d.name}${d.args.map((a) => (a.required ? ` ${a.option} <value>` : '')).join('')} [options]`,
    '',
    d.summary,
    '',
  ];
  if (d.args.length) {
    lines.push('Arguments (kebab-case here; snake_case in the dispatch tool):');
    const width = Math.max(...d.args.map((a) => a.option.length));
    for (const a of d.args) {
      const dflt = a.required ? 'required' : a.default === undefined ? 'optional' : `default ${JSON.stringify(a.default)}`;
      const aliases = a.deprecated_aliases ? `; deprecated alias ${a.deprecated_aliases.join(', ')}` : '';
      lines.push(`  ${a.option.padEnd(width)}  ${a.description} (${dflt}${aliases})`);
    }
  } else lines.push('No arguments.');
  lines.push('', 'Global options (-v, --output json|table|markdown, --repo, --db, --actor, --config) apply here too.');
  return `${lines.join('\n')}\n`;
}

/**
 * `yard <name> --help --output json`, for agents: the description and arguments (command-line
 * spelling, required, default) and the arguments' JSON Schema, the one the dispatch tool
 * advertises for this subcommand (snake_case keys; the CLI takes them in kebab-case).
 */
export function subcommandHelpJson(registry: SubcommandRegistry, name: string) {
  return { ...registry.describe(name), input_schema: registry.jsonSchema(name) };
}

/** How a subcommand's result shows outside JSON mode. */
function presentation(command: string, result: unknown, globals: GlobalOptions): Presentation {
  const r = result as Record<string, unknown>;
  // A legacy:* subcommand prints as the one it was.
  switch (command.replace(/^legacy:/, '')) {
    case 'artifact:read':
      return { text: String(r.content ?? '') };
    case 'audit:export':
      return { text: String(r.jsonl ?? '') };
    case 'diff:show':
      return { text: String(r.diff ?? '') };
    case 'stash:show':
      return { text: String(r.patch ?? '') };
    case 'governance:check': {
      const violations = (r.violations as { rule_id: string; message: string; remediation: string }[]) ?? [];
      if (r.passed) return { text: `PASSED ${r.transition}: no gate refuses it` };
      const rows = violations.map((v) => (globals.verbose ? v : { rule_id: v.rule_id, message: v.message }));
      return {
        text: `FAILED ${r.transition}: ${violations.length} violation(s)\n${render(globals.output === 'markdown' ? 'markdown' : 'table', rows)}`,
      };
    }
    case 'audit:log':
      return {
        columns: ['id', 'timestamp', 'actor', 'wp_sequence', 'transition', 'action', 'evidence_refs'],
        footer: `${(result as unknown[]).length} entries`,
      };
    default:
      return {};
  }
}

/**
 * Everything a subcommand needs before it runs: the runtime, the audit log and the arguments.
 * Records in `refused` how far it got, for the refusal's audit line.
 */
async function setUp(refused: RefusedInvocation): Promise<{ rt: Runtime; log: SubcommandAuditLog; args: Record<string, unknown> }> {
  const rt = await openRuntime(refused.globals, refused.io);
  refused.runtime = rt;
  refused.log = await rt.auditLog().catch((error: unknown) => {
    refused.logFailed = true;
    throw error;
  });
  return { rt, log: refused.log, args: parseSubcommandArgs(refused.tokens, refused.kindOf) };
}

/**
 * Runs `yard <category>:<action> …`; returns the exit code. A refusal before the subcommand runs
 * is audit-logged too (see {@link recordRefusal}); `--help` is no invocation and is not.
 *
 * @example
 * ```ts
 * const code = await runHiddenSubcommand(['branch:create', '--name', 'feat/x'], processIO());
 * ```
 */
export async function runHiddenSubcommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { globals, rest, help, error: globalsError } = scanGlobals(argv);
  const [name, ...tokens] = rest;
  const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
  try {
    if (!name) throw new CliError('invalid_argument', 'no subcommand given', { field: 'command' });
    if (help) {
      if (globalsError) throw globalsError;
      if (globals.output === 'json') emit(io, 'json', subcommandHelpJson(registry, name));
      else io.stdout(subcommandHelp(registry, name));
      return 0;
    }
  } catch (error) {
    reportError(io, globals, error);
    return exitCodeOf(error);
  }
  const refused: RefusedInvocation = { command: name, tokens, globals, io, kindOf: kindsOf(registry.list().find((d) => d.name === name)) };
  try {
    let ready: Awaited<ReturnType<typeof setUp>>;
    try {
      if (globalsError) throw globalsError;
      ready = await setUp(refused);
    } catch (error) {
      const refusal = await recordRefusal(refused, error);
      reportError(io, globals, refusal.error);
      return refusal.exitCode;
    }
    const { rt, log, args } = ready;
    if (name === 'artifact:write' && args.content === undefined && args['from-file'] === undefined && args.from_file === undefined) {
      if (io.stdinIsTTY && globals.output !== 'json') io.stderr('yard: reading the artifact from standard input (end with Ctrl-D)\n');
    }
    // `--verbose` is a global option, read before the subcommand sees it; one that has its own `verbose` gets it too.
    const def = rt.registry.list().find((d) => d.name === name);
    if (globals.verbose && def && 'verbose' in def.args.shape && args.verbose === undefined) args.verbose = true;
    const outcome = toResult(await invokeSubcommand(rt.registry, log, name, args, rt.context()));
    for (const warning of outcome.warnings ?? []) io.stderr(`yard: warning: ${warning}\n`);
    if (!outcome.ok) {
      reportError(io, globals, Object.assign(new Error(outcome.error!.message), outcome.error));
      return outcome.exit_code;
    }
    // branch:create's documented output is its audit record.
    const value = name === 'branch:create' ? outcome.audit : outcome.result;
    emit(io, globals.output, value, presentation(name, value, globals));
    if (globals.verbose && globals.output !== 'json')
      io.stderr(`yard: ${name} took ${outcome.duration_ms} ms (audit #${outcome.audit.id})\n`);
    return 0;
  } catch (error) {
    reportError(io, globals, error);
    return exitCodeOf(error);
  } finally {
    await refused.runtime?.close();
  }
}
