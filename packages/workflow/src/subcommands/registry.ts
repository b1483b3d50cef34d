/**
 * @module registry
 * The hidden subcommand registry: every `<category>:<action>` with its
 * argument schema (names, types, documented defaults) and its handler. The
 * CLI, the dispatch tool and MCP only translate into `invoke`; argument
 * keys may be kebab-case or snake_case (`relative-path` or
 * `relative_path`). Versioning: arguments are never removed, new ones are
 * optional with defaults, deprecated subcommands move to `legacy:*`. A
 * renamed argument keeps its old name as a deprecated alias, and a call that
 * uses one (or a `legacy:*` subcommand) gets a warning ({@link
 * SubcommandRegistry.deprecations}) in its result and its audit line.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { parseInput } from '../domain/inputs.js';
import { slugSchema } from '../domain/model.js';
import { InvalidArgumentError, NotFoundError, WorkflowError } from '../errors.js';
import type { ArtifactStore } from '../git/artifactStore.js';
import { readConfinedFile } from '../git/confinedFile.js';
import type { GitRepository } from '../git/gitRepository.js';
import type { Workflow } from '../workflow.js';

/** The eight categories. */
export const SUBCOMMAND_CATEGORIES = ['branch', 'commit', 'diff', 'stash', 'worktree', 'artifact', 'governance', 'audit'] as const;
export type SubcommandCategory = (typeof SUBCOMMAND_CATEGORIES)[number];

/** What a handler works with. */
export interface SubcommandContext {
  workflow: Workflow;
  git: GitRepository;
  artifacts: ArtifactStore;
  /** Who runs it (recorded in audit entries). */
  actor: string;
  /** Standard input, for `artifact:write` without `content` or `from_file`. */
  readStdin?: () => Promise<Buffer>;
  /**
   * The environment as the composition root hands it (the core never reads `process.env`):
   * `audit:checkpoint --key-env` takes its signing key from a `YARD_CHECKPOINT_KEY*` variable here.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The namespace deprecated subcommands move to: `legacy:<category>:<action>`. */
export const LEGACY_PREFIX = 'legacy:';

/** One subcommand. */
export interface SubcommandDefinition {
  name: string;
  category: SubcommandCategory;
  action: string;
  summary: string;
  /** One of the 24 documented subcommands (their arguments and defaults are a contract). */
  documented: boolean;
  args: z.ZodObject;
  /** Deprecated argument names (snake_case) and the argument each now is. */
  aliases: Readonly<Record<string, string>>;
  /** Set on a `legacy:*` subcommand: what to call instead. */
  deprecated?: { replacement: string };
  run(ctx: SubcommandContext, args: Record<string, unknown>): Promise<unknown>;
}

/** Argument helpers: values from a command line arrive as strings, from JSON as their own types. */
export const arg = {
  text: (description: string) => z.string().min(1).describe(description),
  /** A feature slug: a malformed one is a usage error (exit 2) before any lookup could call it not_found. */
  slug: () => slugSchema.describe('feature slug'),
  int: (description: string) => z.coerce.number().int().describe(description),
  bool: (description: string) => z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean()).describe(description),
  list: (description: string) =>
    z
      .preprocess(
        (v) =>
          typeof v === 'string'
            ? v
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean)
            : v,
        z.array(z.string().min(1)),
      )
      .describe(description),
};

/**
 * Defines a subcommand with typed arguments. `aliases` keeps renamed arguments working: each
 * old name maps to the argument it became, is accepted in its place (required ones too), and
 * draws a deprecation warning.
 */
export function defineSubcommand<S extends z.ZodObject>(def: {
  name: `${SubcommandCategory}:${string}`;
  summary: string;
  documented?: boolean;
  args: S;
  aliases?: Record<string, keyof z.output<S> & string>;
  run: (ctx: SubcommandContext, args: z.output<S>) => Promise<unknown>;
}): SubcommandDefinition {
  const [category, action] = def.name.split(':') as [SubcommandCategory, string];
  const aliases = def.aliases ?? {};
  for (const [alias, target] of Object.entries(aliases)) {
    if (alias in def.args.shape || !(target in def.args.shape))
      throw new WorkflowError('invalid_argument', `${def.name}: alias ${alias} must be a free name for one of its arguments`, {
        details: { field: alias },
      });
  }
  return {
    name: def.name,
    category,
    action,
    summary: def.summary,
    documented: def.documented ?? false,
    args: def.args.strict(),
    aliases,
    run: def.run as SubcommandDefinition['run'],
  };
}

/**
 * Moves a subcommand to the `legacy:*` namespace, unchanged: the same arguments (never removed),
 * the same handler, undocumented, and a warning naming `replacement` on every call.
 *
 * @example
 * ```ts
 * const old = legacySubcommand(defineSubcommand({ name: 'demo:echo', summary: 'v1', args: z.object({}), run: async () => 1 }), 'demo:say');
 * old.name; // 'legacy:demo:echo'
 * ```
 */
export function legacySubcommand(def: SubcommandDefinition, replacement: string): SubcommandDefinition {
  return {
    ...def,
    name: `${LEGACY_PREFIX}${def.name}`,
    summary: `Deprecated, use ${replacement}: ${def.summary}`,
    documented: false,
    deprecated: { replacement },
  };
}

/** Describes one argument for help output and tool schemas. */
export interface ArgumentDescription {
  name: string;
  /** The command-line spelling. */
  option: string;
  required: boolean;
  default: unknown;
  description: string;
  /** Deprecated names still accepted for it (command-line spelling). */
  deprecated_aliases?: string[];
}

const snake = (key: string) => key.replace(/-/g, '_');

/**
 * The registry.
 *
 * @example
 * ```ts
 * const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
 * const result = await registry.invoke('diff:stat', { from: 'main' }, ctx);
 * ```
 */
export class SubcommandRegistry {
  private readonly byName = new Map<string, SubcommandDefinition>();

  constructor(definitions: readonly SubcommandDefinition[]) {
    for (const def of definitions) {
      if (this.byName.has(def.name)) throw new WorkflowError('already_exists', `subcommand ${def.name} is defined twice`);
      this.byName.set(def.name, def);
    }
  }

  list(filter: { documented?: boolean; category?: SubcommandCategory } = {}): SubcommandDefinition[] {
    return [...this.byName.values()].filter(
      (d) =>
        (filter.documented === undefined || d.documented === filter.documented) && (!filter.category || d.category === filter.category),
    );
  }

  get(name: string): SubcommandDefinition {
    const def = this.byName.get(name);
    if (!def) {
      const hint = [...this.byName.keys()].filter((n) => n.split(':')[0] === name.split(':')[0]);
      throw new WorkflowError(
        'invalid_argument',
        `unknown subcommand ${JSON.stringify(name)}${hint.length ? `; ${name.split(':')[0]} has ${hint.join(', ')}` : ''}`,
        {
          details: { field: 'command' },
        },
      );
    }
    return def;
  }

  /** True when the subcommand takes `feature_slug` (the dispatch tool fills it from its envelope). */
  takesFeatureSlug(name: string): boolean {
    return 'feature_slug' in this.get(name).args.shape;
  }

  /**
   * Normalizes keys (kebab-case to snake_case, deprecated aliases to their arguments) and
   * validates against the schema, applying defaults.
   */
  parseArgs(name: string, raw: Record<string, unknown>): Record<string, unknown> {
    const def = this.get(name);
    const normalized: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(raw)) {
      const k = snake(key);
      if (k in normalized) throw new InvalidArgumentError(key, 'given twice (kebab-case and snake_case)');
      if (value !== undefined) normalized[k] = value;
    }
    for (const [alias, target] of Object.entries(def.aliases)) {
      if (!(alias in normalized)) continue;
      if (target in normalized) throw new InvalidArgumentError(alias, `given with ${target}, of which it is the deprecated alias`);
      normalized[target] = normalized[alias];
      delete normalized[alias];
    }
    return parseInput(def.args, normalized) as Record<string, unknown>;
  }

  /**
   * The deprecation warnings a call draws: a `legacy:*` subcommand, and each deprecated
   * argument alias it uses. Never throws (an unknown subcommand draws none; it fails when run).
   */
  deprecations(name: string, raw: Record<string, unknown>): string[] {
    const def = this.byName.get(name);
    if (!def) return [];
    const warnings: string[] = [];
    if (def.deprecated) warnings.push(`${def.name} is deprecated; use ${def.deprecated.replacement}`);
    const given = new Set(Object.keys(raw).map(snake));
    for (const [alias, target] of Object.entries(def.aliases)) {
      if (given.has(alias))
        warnings.push(
          `${def.name}: ${alias} is deprecated; use ${target} (--${alias.replace(/_/g, '-')} is now --${target.replace(/_/g, '-')})`,
        );
    }
    return warnings;
  }

  /** Parses the arguments and runs the handler. */
  async invoke(name: string, raw: Record<string, unknown>, ctx: SubcommandContext): Promise<unknown> {
    const def = this.get(name);
    return def.run(ctx, this.parseArgs(name, raw));
  }

  /** Arguments of a subcommand, with their defaults, for help text. */
  describe(name: string): { name: string; summary: string; documented: boolean; args: ArgumentDescription[] } {
    const def = this.get(name);
    const args = Object.entries(def.args.shape).map(([key, schema]): ArgumentDescription => {
      const s = schema as z.ZodType;
      const parsed = s.safeParse(undefined);
      const aliases = Object.entries(def.aliases)
        .filter(([, target]) => target === key)
        .map(([alias]) => `--${alias.replace(/_/g, '-')}`);
      return {
        name: key,
        option: `--${key.replace(/_/g, '-')}`,
        required: !parsed.success,
        default: parsed.success ? parsed.data : undefined,
        description: describedBy(s),
        ...(aliases.length ? { deprecated_aliases: aliases } : {}),
      };
    });
    return { name: def.name, summary: def.summary, documented: def.documented, args };
  }

  /** JSON Schema of a subcommand's arguments, defaults included (see {@link argumentsJsonSchema}). */
  jsonSchema(name: string): Record<string, unknown> {
    return argumentsJsonSchema(this.get(name).args);
  }
}

/** The argument contract of a registry: subcommand to argument to whether it is required. */
export type RegistryShape = Record<string, Record<string, { required: boolean }>>;

/** The argument contract of `registry` (for {@link versioningViolations}). */
export function registryShape(registry: SubcommandRegistry): RegistryShape {
  return Object.fromEntries(
    registry
      .list()
      .map((def) => [def.name, Object.fromEntries(registry.describe(def.name).args.map((a) => [a.name, { required: a.required }]))]),
  );
}

/**
 * Where `next` breaks the versioning rules against `previous`: a subcommand removed without
 * moving to `legacy:*`, an argument no longer accepted (under its name or as a deprecated
 * alias), a new argument that is required. A subcommand whose old form lives on as
 * `legacy:<name>` may change its arguments (that is what the namespace is for), but the legacy
 * form must keep every old argument.
 *
 * @example
 * ```ts
 * versioningViolations(registryShape(v1), v2); // [] when v2 is a compatible successor
 * ```
 */
export function versioningViolations(previous: RegistryShape, next: SubcommandRegistry): string[] {
  const violations: string[] = [];
  const has = (name: string) => next.list().some((d) => d.name === name);
  const accepts = (name: string, arg: string) => {
    const def = next.get(name);
    return arg in def.args.shape || arg in def.aliases;
  };
  for (const [name, args] of Object.entries(previous)) {
    const legacy = name.startsWith(LEGACY_PREFIX) ? undefined : `${LEGACY_PREFIX}${name}`;
    const movedToLegacy = legacy !== undefined && has(legacy);
    if (movedToLegacy) {
      for (const arg of Object.keys(args)) if (!accepts(legacy, arg)) violations.push(`${legacy} no longer takes ${arg}`);
    }
    if (!has(name)) {
      if (!movedToLegacy) violations.push(`${name} was removed; a deprecated subcommand moves to ${legacy ?? 'legacy:*'}`);
      continue;
    }
    if (movedToLegacy) continue;
    for (const arg of Object.keys(args)) if (!accepts(name, arg)) violations.push(`${name} no longer takes ${arg}`);
    const def = next.get(name);
    const renamedFrom = new Map(Object.entries(def.aliases).map(([alias, target]) => [target, alias]));
    for (const described of next.describe(name).args) {
      const old = args[described.name] ?? args[renamedFrom.get(described.name) ?? ''];
      if (!old && described.required) violations.push(`${name} has a new required argument ${described.name}; new arguments are optional`);
      if (old && !old.required && described.required) violations.push(`${name} now requires ${described.name}`);
    }
  }
  return violations;
}

/**
 * JSON Schema (draft 2020-12) of what a caller may send for `schema`: the input side, every
 * documented default included.
 *
 * zod's own input schema leaves out the default of any argument whose schema transforms its
 * input, because in general a default is an output value that need not be a valid input. That
 * drops every boolean and list default here: {@link arg}'s `bool` and `list` preprocess
 * command-line strings (`"true"`, `"a,b"`). Their defaults (`false`, `[]`) are valid inputs that
 * parse to themselves, so a default that does is put back; one that does not stays out.
 *
 * @example
 * ```ts
 * const schema = argumentsJsonSchema(z.object({ force: arg.bool('delete anyway').default(false) }));
 * schema.properties.force; // { type: 'boolean', description: 'delete anyway', default: false }
 * ```
 */
export function argumentsJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      const def = (zodSchema as unknown as { _zod: { def: { type: string; innerType?: z.ZodType; defaultValue?: unknown } } })._zod.def;
      if (def.type !== 'default' || !def.innerType || 'default' in jsonSchema) return;
      const value = def.defaultValue;
      const parsed = def.innerType.safeParse(value);
      const json = jsonCopy(value);
      if (parsed.success && isDeepStrictEqual(parsed.data, value) && json) jsonSchema.default = json.value;
    },
  }) as Record<string, unknown>;
}

/** A copy of `value` when JSON holds it unchanged (not a BigInt, a Date, `NaN`, …). */
function jsonCopy(value: unknown): { value: unknown } | undefined {
  try {
    const copy: unknown = JSON.parse(JSON.stringify(value));
    return isDeepStrictEqual(copy, value) ? { value: copy } : undefined;
  } catch {
    return undefined;
  }
}

/** A schema's description, looking through `.default()` and `.optional()` wrappers (which do not carry it). */
function describedBy(schema: z.ZodType): string {
  for (let s: z.ZodType | undefined = schema; s; s = (s as unknown as { _zod: { def: { innerType?: z.ZodType } } })._zod.def.innerType) {
    if (s.description) return s.description;
  }
  return '';
}

/** Reads `from_file` (confined to the repository) or standard input for `artifact:write`. */
export async function artifactContent(
  ctx: SubcommandContext,
  args: { content?: string | undefined; from_file?: string | undefined },
): Promise<Buffer> {
  if (args.content !== undefined && args.from_file !== undefined)
    throw new InvalidArgumentError('content', 'give content or from_file, not both');
  if (args.content !== undefined) return Buffer.from(args.content, 'utf8');
  if (args.from_file !== undefined) return readRepositoryFile(ctx, args.from_file, 'from_file');
  if (!ctx.readStdin) throw new InvalidArgumentError('content', 'no content, from_file or standard input');
  return ctx.readStdin();
}

/**
 * Reads a file the caller names (`from_file`, `key_file`), confined to the repository. A file
 * that is not there is the caller's typo: not_found (exit 3) naming the argument, not an
 * internal ENOENT; so is anything that is not a regular file (a directory, a FIFO: never
 * waited on). The file opened is checked to be inside the repository before it is read,
 * so a symlink swapped in after the path check cannot pull a file from outside into an artifact.
 */
export async function readRepositoryFile(ctx: SubcommandContext, path: string, field: string): Promise<Buffer> {
  try {
    return await readConfinedFile(ctx.git.root, path, { field });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(field, path);
    throw error;
  }
}
