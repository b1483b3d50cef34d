/**
 * @module init
 * `yard init`: writes `.agileplus/config.yaml` for a repository, with its
 * own test and lint commands (see `localChecks`) as the local CI command
 * and the person running it as the governance admin. An existing config is
 * kept unless `--force`, which rewrites only the `ci` section.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { DEFAULT_CONFIG_PATH, yardConfigSchema } from '../config.js';
import { CliError } from '../errors.js';
import { detectLocalChecks } from '../localChecks.js';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import { resolveActor, resolveRepo } from '../runtime.js';

/**
 * Runs `yard init [--force]`; prints what it wrote.
 *
 * @example
 * ```ts
 * await initCommand({ io, globals }, {}); // writes <repo>/.agileplus/config.yaml
 * ```
 */
export async function initCommand(ctx: CommandContext, opts: { force?: boolean }): Promise<number> {
  const root = await resolveRepo(ctx.globals, ctx.io);
  const path = ctx.globals.config !== undefined ? resolve(ctx.io.cwd, ctx.globals.config) : join(root, DEFAULT_CONFIG_PATH);
  const { parse, stringify } = await import('yaml');
  let config: Record<string, unknown>;
  if (existsSync(path)) {
    if (!opts.force)
      throw new CliError('already_exists', `${path} exists; yard init --force rewrites its ci section and keeps the rest`, {
        field: 'config',
      });
    config = (parse(await readFile(path, 'utf8')) as Record<string, unknown> | null) ?? {};
  } else {
    config = { admins: [await resolveActor(ctx.globals, ctx.io, root)] };
  }
  const checks = await detectLocalChecks(root);
  config.ci = { checks };
  // What is written must load: the same schema `yard` reads it with.
  const valid = yardConfigSchema.safeParse(config);
  if (!valid.success)
    throw new CliError('invalid_argument', `${path}: ${valid.error.issues[0]!.path.join('.')}: ${valid.error.issues[0]!.message}`, {
      field: 'config',
    });
  await mkdir(dirname(path), { recursive: true });
  const header = '# yard config (see packages/cli/README.md). ci.checks: the local CI command, detected by yard init.\n';
  await writeFile(path, `${header}${stringify(config)}`);
  if (ctx.globals.output === 'json') emit(ctx.io, 'json', { path, admins: config.admins ?? [], checks });
  else {
    ctx.io.stdout(`wrote ${path}\n`);
    ctx.io.stdout(checks.length ? checks.map((c) => `  ${c.kind}: ${c.name}\n`).join('') : '  no test or lint command found\n');
  }
  return 0;
}
