/**
 * @module subcommand
 * Hidden subcommands: `yard <category>:<action> [--name value …]`. They
 * never appear in `yard --help`; `yard <name> --help` describes one. Every
 * invocation, including unknown names and bad arguments, writes exactly one
 * hash-chained line to `.agileplus/audit.jsonl` through the workflow's
 * `runSubcommand`.
 */
import { runSubcommand, type SubcommandDefinition, type SubcommandRegistry, toResult } from '@switchyard/workflow';
import type { z } from 'zod';
import { type ArgKind, parseSubcommandArgs, splitGlobals } from '../argv.js';
import { CliError } from '../errors.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { emit, exitCodeOf, type Presentation, render, reportError } from '../output.js';
import { openRuntime } from '../runtime.js';

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
    const schema = shape[key.replace(/-/g, '_')];
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
      lines.push(`  ${a.option.padEnd(width)}  ${a.description} (${dflt})`);
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
  switch (command) {
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
 * Runs `yard <category>:<action> …`; returns the exit code.
 *
 * @example
 * ```ts
 * const code = await runHiddenSubcommand(['branch:create', '--name', 'feat/x'], processIO());
 * ```
 */
export async function runHiddenSubcommand(argv: readonly string[], io: CliIO): Promise<number> {
  let globals: GlobalOptions = { verbose: 0, output: 'table' };
  try {
    const split = splitGlobals(argv);
    globals = split.globals;
    const [name, ...tokens] = split.rest;
    if (!name) throw new CliError('invalid_argument', 'no subcommand given', { field: 'command' });
    if (split.help) {
      const { BUILTIN_SUBCOMMANDS, SubcommandRegistry } = await import('@switchyard/workflow');
      const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
      if (globals.output === 'json') emit(io, 'json', subcommandHelpJson(registry, name));
      else io.stdout(subcommandHelp(registry, name));
      return 0;
    }
    const rt = await openRuntime(globals, io);
    try {
      const log = await rt.auditLog();
      const def = rt.registry.list().find((d) => d.name === name);
      let args: Record<string, unknown>;
      try {
        args = parseSubcommandArgs(tokens, kindsOf(def));
      } catch (error) {
        // A command line that does not parse is still an invocation: it gets its line.
        await log.record({ command: name, args: { argv: tokens }, actor: rt.actor, exit_code: 2, duration_ms: 0 });
        throw error;
      }
      if (name === 'artifact:write' && args.content === undefined && args['from-file'] === undefined && args.from_file === undefined) {
        if (io.stdinIsTTY && globals.output !== 'json') io.stderr('yard: reading the artifact from standard input (end with Ctrl-D)\n');
      }
      const outcome = toResult(await runSubcommand(rt.registry, log, name, args, rt.context()));
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
    } finally {
      await rt.close();
    }
  } catch (error) {
    reportError(io, globals, error);
    return exitCodeOf(error);
  }
}
