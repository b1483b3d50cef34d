/**
 * @module load
 * Reads a YAML config: `${VAR}` and `${VAR:-default}` expand from the
 * environment (so secrets can stay out of the file), then the schema
 * validates it. A bad config fails with every bad path listed, YAML syntax
 * errors with their line and column.
 */
import { readFile } from 'node:fs/promises';
import { type FieldIssue, fieldIssues } from '@switchyard/http-kit';
import { parseDocument } from 'yaml';
import { type GatewayConfig, gatewayConfigSchema } from './schema.js';

/** A config that cannot be used, with every problem found. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly issues: FieldIssue[];

  constructor(source: string, issues: FieldIssue[]) {
    super(`invalid config ${source}:\n${issues.map((i) => `  - ${i.field}: ${i.message}`).join('\n')}`);
    this.issues = issues;
  }
}

/** Options of {@link parseConfig}. */
export interface ParseConfigOptions {
  /** Names the config in messages (a file path). */
  source?: string;
  env?: NodeJS.ProcessEnv;
  /** Provider kinds the server knows; others are reported. */
  knownKinds?: readonly string[];
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function expand(value: unknown, env: NodeJS.ProcessEnv, path: string[], issues: FieldIssue[]): unknown {
  if (typeof value === 'string') {
    return value.replace(VARIABLE, (_whole, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined) return found;
      if (fallback !== undefined) return fallback;
      issues.push({
        field: path.join('.') || '(root)',
        message: `environment variable ${name} is not set (write \${${name}:-default} for a default)`,
      });
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => expand(item, env, [...path, String(i)], issues));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expand(item, env, [...path, key], issues)]));
  }
  return value;
}

/**
 * Parses and validates config text.
 *
 * @throws {ConfigError} listing every problem.
 * @example
 * ```ts
 * const config = parseConfig(await readFile('config.yaml', 'utf8'), { source: 'config.yaml' });
 * ```
 */
export function parseConfig(text: string, options: ParseConfigOptions = {}): GatewayConfig {
  const source = options.source ?? '(text)';
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      source,
      document.errors.map((e) => ({
        field: e.linePos ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '(yaml)',
        message: e.message.split('\n')[0]!,
      })),
    );
  }
  const raw = document.toJS() ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new ConfigError(source, [{ field: '(root)', message: 'the config must be a mapping of keys' }]);
  const issues: FieldIssue[] = [];
  const expanded = expand(raw, options.env ?? process.env, [], issues);
  const result = gatewayConfigSchema.safeParse(expanded);
  if (!result.success) issues.push(...fieldIssues(result.error.issues));
  // Kinds are checked on the input too, so an unknown kind is listed with every other problem, not only once they are fixed.
  const providers = (expanded as { providers?: unknown }).providers;
  if (options.knownKinds && providers && typeof providers === 'object' && !Array.isArray(providers)) {
    for (const [name, provider] of Object.entries(providers as Record<string, unknown>)) {
      const kind = (provider as { kind?: unknown } | null)?.kind;
      if (typeof kind === 'string' && kind.length > 0 && !options.knownKinds.includes(kind)) {
        issues.push({
          field: `providers.${name}.kind`,
          message: `unknown kind ${JSON.stringify(kind)}; known: ${options.knownKinds.join(', ')}`,
        });
      }
    }
  }
  if (issues.length > 0 || !result.success) throw new ConfigError(source, issues);
  return result.data;
}

/** Reads and parses a config file. */
export async function loadConfigFile(path: string, options: Omit<ParseConfigOptions, 'source'> = {}): Promise<GatewayConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [
      { field: '(file)', message: `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` },
    ]);
  }
  return parseConfig(text, { ...options, source: path });
}
