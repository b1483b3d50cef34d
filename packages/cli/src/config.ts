/**
 * @module config
 * `.agileplus/config.yaml` (or `--config <file>`): who the admins are, which
 * agent `implement` runs, the gateway for triage and review, the tracker
 * and code host for sync, and the servers' API keys and webhook secret.
 * Every part is optional. A secret may be written as `env:NAME` so the
 * file itself holds none; secrets never appear in output or errors.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { readArgumentFile } from './argumentFile.js';
import { CliError } from './errors.js';
import { codeHostConfigSchema, trackerConfigSchema } from './integrationConfig.js';

const secret = z.string().min(1);

export const yardConfigSchema = z
  .object({
    /** Names the repository in audit origins (default: the repository directory's name). */
    repo_name: z.string().min(1).optional(),
    /** Actors allowed to enforce and define governance rules. */
    admins: z.array(z.string().min(1)).default([]),
    /** The database (a path or a postgres:// URL); `--db` wins. */
    db: z.string().min(1).optional(),
    agent: z
      .object({
        kind: z.enum(['process', 'agent-session']).default('process'),
        /** `process`: the executable and its arguments (the prompt arrives on stdin). */
        command: z.string().min(1).optional(),
        args: z.array(z.string()).default([]),
        /** `agent-session`: the session server's URL. */
        url: z.string().url().optional(),
        api_key: secret.optional(),
        timeout_ms: z.number().int().positive().optional(),
        review_cycles: z.number().int().min(1).max(20).optional(),
      })
      .strict()
      .optional(),
    /** A Switchyard gateway: the LLM for triage and review (heuristics without it). */
    gateway: z
      .object({ url: z.string().url(), model: z.string().min(1), api_key: secret.optional() })
      .strict()
      .optional(),
    /** The tracker features sync with: Linear, Plane, or the custom REST shape (see integrationConfig). */
    tracker: trackerConfigSchema.optional(),
    /** GitHub: issues, pull requests and CI; signs in with a token, the OAuth device flow or as a GitHub App. */
    code_host: codeHostConfigSchema.optional(),
    /** The tracker's webhook signing secret (`POST /webhooks/tracker`), verified by the tracker's own scheme. */
    webhook_secret: secret.optional(),
    /**
     * Client keys of the HTTP and gRPC servers: a key, or `{key, name, admin}`. A key's name is the actor its
     * calls are recorded under; an `admin` key may run admin-only operations. Without keys the servers serve
     * only this machine.
     */
    api_keys: z
      .array(z.union([secret, z.object({ key: secret, name: z.string().min(1).max(128), admin: z.boolean().default(false) }).strict()]))
      .default([]),
    /**
     * OpenTelemetry tracing of `yard serve`: observability's `tracing` section (`enabled`, `exporter` otlp|zipkin|jaeger,
     * `endpoint`, `service_name`, `sample_rate`, `headers`), checked by observability's own schema when the server starts.
     */
    tracing: z.record(z.string(), z.unknown()).optional(),
    /** The repository's own checks, the local CI command (`yard init` detects them). */
    ci: z
      .object({
        checks: z
          .array(
            z
              .object({
                name: z.string().min(1),
                /** Recorded as test_result, lint_result or security_scan evidence. */
                kind: z.enum(['test', 'lint', 'security']),
                /** The program and its arguments, run without a shell. */
                run: z.array(z.string().min(1)).min(1),
              })
              .strict(),
          )
          .default([]),
        /** A check running longer is stopped and fails. */
        timeout_ms: z.number().int().positive().optional(),
        /**
         * The remote `ship` pushes the target branch to, and, with a code host, the one the review loop
         * pushes each work package's branch to before reading its CI (default `origin` when the repository has it).
         */
        remote: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type YardConfig = z.infer<typeof yardConfigSchema>;

/** The default config file, relative to the repository. */
export const DEFAULT_CONFIG_PATH = join('.agileplus', 'config.yaml');

/**
 * Loads the config: `explicit` must exist; the default file is optional.
 * `env:NAME` values are replaced by the environment variable's value.
 *
 * @example
 * ```ts
 * const config = await loadConfig('/repo', undefined, process.env);
 * ```
 */
export async function loadConfig(
  repoRoot: string,
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd = process.cwd(),
): Promise<YardConfig> {
  const path = explicit !== undefined ? resolve(cwd, explicit) : join(repoRoot, DEFAULT_CONFIG_PATH);
  // The default file is optional; one given with --config must be there.
  if (explicit === undefined && !existsSync(path)) return yardConfigSchema.parse({});
  const text = await readArgumentFile(path, explicit !== undefined ? '--config' : 'config');
  const { parse } = await import('yaml');
  let raw: unknown;
  try {
    raw = parse(text) ?? {};
  } catch (error) {
    throw new CliError('invalid_argument', `${path}: not YAML: ${(error as Error).message}`, { field: 'config' }, { cause: error });
  }
  const result = yardConfigSchema.safeParse(resolveEnv(raw, env, ''));
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const keys = (issue as { keys?: string[] }).keys;
    const field = [...issue.path.map(String), ...(keys?.length ? [keys[0]!] : [])].join('.') || '(file)';
    throw new CliError('invalid_argument', `${path}: ${field}: ${issue.message}`, { field: `config.${field}` });
  }
  return result.data;
}

const UNSET = '\0unset:';

/**
 * Returns a config section after checking that every `env:NAME` in it was
 * set; throws a usage error naming the first variable that was not.
 *
 * @example
 * ```ts
 * const tracker = resolved(config.tracker);
 * ```
 */
export function resolved<T>(section: T): T {
  const visit = (value: unknown): void => {
    if (typeof value === 'string' && value.startsWith(UNSET)) {
      const [path, name] = value.slice(UNSET.length).split('\0');
      throw new CliError('invalid_argument', `config ${path}: environment variable ${name} is not set`, { field: `config.${path}` });
    }
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') Object.values(value).forEach(visit);
  };
  visit(section);
  return section;
}

function resolveEnv(value: unknown, env: Readonly<Record<string, string | undefined>>, path: string): unknown {
  if (typeof value === 'string' && value.startsWith('env:')) {
    const name = value.slice(4);
    const found = env[name];
    // Unset: fail only when a command uses this setting (see `resolved`), naming the variable, never a value.
    return found === undefined || found === '' ? `${UNSET}${path}\0${name}` : found;
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveEnv(v, env, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveEnv(v, env, path ? `${path}.${k}` : k)]));
  return value;
}
