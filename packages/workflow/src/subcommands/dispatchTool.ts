/**
 * @module dispatchTool
 * The dispatch tool that coding agents call: one envelope
 * `{command: "dispatch_command", feature_slug, args: {command: "<category>:<action>", ...}}`
 * runs one hidden subcommand and answers one JSON result. `yard dispatch`,
 * the MCP server (`yard mcp`) and gRPC's `DispatchCommand` all go through
 * this, so they parse, fill `feature_slug` and audit-log the same way: every
 * call writes exactly one line to `.agileplus/audit.jsonl`, including
 * envelopes that do not parse.
 */
import { z } from 'zod';
import { slugSchema } from '../domain/model.js';
import { InvalidArgumentError, WorkflowError } from '../errors.js';
import { EXIT_CODES, exitCodeFor } from './exitCodes.js';
import { type InvokedSubcommand, invokeSubcommand } from './invokeSubcommand.js';
import type { SubcommandContext, SubcommandRegistry } from './registry.js';
import type { SubcommandAuditLog } from './subcommandAuditLog.js';

/** The tool's name, as MCP lists it and as the envelope's `command` spells it. */
export const DISPATCH_TOOL_NAME = 'dispatch_command';

/** A subcommand name: `<category>:<action>` (lower case, dashes in the action), or a deprecated one as `legacy:<category>:<action>`. */
export const SUBCOMMAND_NAME = /^(?:legacy:)?[a-z]+:[a-z][a-z0-9-]*$/;

/**
 * The envelope. `args` keys are the subcommand's option names in
 * kebab-case or snake_case; `feature_slug` fills `--feature-slug` when the
 * subcommand takes one.
 */
export const dispatchEnvelopeSchema = z
  .object({
    command: z.literal(DISPATCH_TOOL_NAME),
    feature_slug: slugSchema.optional(),
    args: z
      .object({ command: z.string().regex(SUBCOMMAND_NAME, 'a subcommand reads "<category>:<action>", e.g. "branch:create"') })
      .catchall(z.unknown()),
  })
  .strict();
export type DispatchEnvelope = z.infer<typeof dispatchEnvelopeSchema>;

/** What every surface answers: the outcome of the one subcommand (with its audit line), and whether it succeeded. */
export interface DispatchResult extends InvokedSubcommand {
  ok: boolean;
}

/**
 * The tool's input schema for MCP: `feature_slug` and `args`, where `args`
 * is one of the subcommands (a union on `args.command`) with its own
 * arguments, required ones and documented defaults, generated from the
 * registry's zod schemas. The advertised keys are snake_case; the tool also
 * accepts kebab-case.
 *
 * @example
 * ```ts
 * const schema = argumentsJsonSchema(dispatchToolInputSchema(registry)); // JSON Schema, defaults included
 * ```
 */
export function dispatchToolInputSchema(registry: SubcommandRegistry): z.ZodObject {
  const variants = registry
    .list()
    .map((def) => def.args.extend({ command: z.literal(def.name).describe(`${def.summary}${def.documented ? '' : ' (undocumented)'}`) }));
  const [first, ...rest] = variants;
  if (!first) throw new WorkflowError('invalid_argument', 'the registry has no subcommands', { details: { field: 'registry' } });
  return z.object({
    feature_slug: slugSchema.optional().describe('the feature the subcommand works on; fills its feature_slug argument'),
    args: z.discriminatedUnion('command', [first, ...rest]).describe('the subcommand ("<category>:<action>") and its arguments'),
  });
}

/** Options of {@link DispatchTool}. */
export interface DispatchToolOptions {
  registry: SubcommandRegistry;
  log: SubcommandAuditLog;
  /** The context subcommands run in (the actor may be overridden per call). */
  context: SubcommandContext;
}

/**
 * Runs dispatch envelopes.
 *
 * @example
 * ```ts
 * const tool = new DispatchTool({ registry, log, context });
 * const result = await tool.dispatch({ command: 'dispatch_command', feature_slug: '001-login', args: { command: 'audit:verify' } });
 * ```
 */
export class DispatchTool {
  constructor(private readonly options: DispatchToolOptions) {}

  get registry(): SubcommandRegistry {
    return this.options.registry;
  }

  /**
   * Parses an envelope (an object, or JSON text) and runs its subcommand.
   * Never throws for a failed subcommand or a bad envelope: the result
   * says, and the audit log has its line either way.
   */
  async dispatch(input: unknown, overrides: { actor?: string } = {}): Promise<DispatchResult> {
    const context = overrides.actor ? { ...this.options.context, actor: overrides.actor } : this.options.context;
    let command: string = DISPATCH_TOOL_NAME;
    let args: Record<string, unknown> = {};
    try {
      ({ command, args } = this.plan(input));
    } catch (error) {
      const value = typeof input === 'string' ? tryJson(input) : input;
      command = guessCommand(value) ?? DISPATCH_TOOL_NAME;
      return this.refuse(command, value, error, context.actor);
    }
    return toResult(await invokeSubcommand(this.options.registry, this.options.log, command, args, context));
  }

  /** The subcommand and arguments an envelope asks for (throws `invalid_argument` naming the field). */
  plan(input: unknown): { command: string; args: Record<string, unknown> } {
    const envelope = parseEnvelope(input);
    const { command, ...args } = envelope.args;
    if (envelope.feature_slug !== undefined && this.takesFeatureSlug(command)) {
      const given = args.feature_slug ?? args['feature-slug'];
      if (given !== undefined && given !== envelope.feature_slug)
        throw new InvalidArgumentError(
          'args.feature_slug',
          `differs from the envelope's feature_slug ${JSON.stringify(envelope.feature_slug)}`,
        );
      if (given === undefined) args.feature_slug = envelope.feature_slug;
    }
    return { command, args };
  }

  private takesFeatureSlug(command: string): boolean {
    try {
      return this.options.registry.takesFeatureSlug(command);
    } catch {
      return false; // unknown subcommands fail when run, which logs them
    }
  }

  private async refuse(command: string, _input: unknown, error: unknown, actor: string): Promise<DispatchResult> {
    const failure = error instanceof WorkflowError ? error : new InvalidArgumentError('input', String(error));
    const exitCode = exitCodeFor(failure);
    // Only arguments that passed their schema are logged: a refused envelope's are not (its refusal names the field).
    const audit = await this.options.log.record({
      command,
      args: {},
      actor,
      exit_code: exitCode,
      duration_ms: 0,
      result: { error: { code: failure.code, message: failure.message } },
    });
    return {
      ok: false,
      command,
      exit_code: exitCode,
      duration_ms: 0,
      error: { code: failure.code, message: failure.message, ...(failure.details ? { details: failure.details } : {}) },
      audit,
    };
  }
}

/** Parses an envelope from an object or JSON text; errors name the field. */
export function parseEnvelope(input: unknown): DispatchEnvelope {
  let value = input;
  if (typeof input === 'string' || input instanceof Uint8Array) {
    const text = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new InvalidArgumentError('input', `not JSON: ${(error as Error).message}`, { cause: error });
    }
  }
  const parsed = dispatchEnvelopeSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const keys = (issue as { keys?: string[] }).keys;
  const field = [...issue.path.map(String), ...(issue.code === 'unrecognized_keys' && keys?.length ? [keys[0]!] : [])].join('.') || 'input';
  throw new InvalidArgumentError(field, issue.message, { cause: parsed.error });
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function guessCommand(input: unknown): string | undefined {
  const args = (input as { args?: { command?: unknown } } | null)?.args;
  return typeof args?.command === 'string' && SUBCOMMAND_NAME.test(args.command) ? args.command : undefined;
}

/** The surfaces' shape of an outcome. */
export function toResult(outcome: InvokedSubcommand): DispatchResult {
  return {
    ok: outcome.exit_code === EXIT_CODES.ok,
    command: outcome.command,
    exit_code: outcome.exit_code,
    duration_ms: outcome.duration_ms,
    ...(outcome.error ? { error: outcome.error } : { result: outcome.result }),
    ...(outcome.warnings ? { warnings: outcome.warnings } : {}),
    audit: outcome.audit,
  };
}
