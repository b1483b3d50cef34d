/**
 * @module argv
 * Reading a command line without loading anything: the global options
 * (accepted anywhere, with one meaning everywhere, including inside hidden
 * subcommands such as `governance:check --verbose` or `audit:log --output
 * json`), and whether the command is a hidden `<category>:<action>`.
 */
import { CliError } from './errors.js';
import { type GlobalOptions, outputFormat } from './io.js';

/** A hidden subcommand's name: `<category>:<action>`, or a deprecated one as `legacy:<category>:<action>`. */
export const HIDDEN_NAME = /^(?:legacy:)?[a-z]+:[a-z][a-z0-9-]*$/;

const VALUE_GLOBALS = new Set(['db', 'repo', 'actor', 'config', 'output']);

/** The result of {@link splitGlobals}. */
export interface SplitArgv {
  globals: GlobalOptions;
  /** Everything that is not a global option, in order. */
  rest: string[];
  help: boolean;
}

/** The result of {@link scanGlobals}. */
export interface ScannedArgv extends SplitArgv {
  /** The first global option given wrong (the others are read all the same). */
  error?: CliError;
}

/**
 * Takes the global options out of `argv` (anywhere before `--`):
 * `-v`/`-vv`/`--verbose` (counted), `--db`, `--repo`, `--actor`, `--config`,
 * `--output` (as `--opt value` or `--opt=value`), and `-h`/`--help`.
 * Throws the first one given wrong.
 *
 * @example
 * ```ts
 * splitGlobals(['-vv', 'branch:list', '--output', 'json']); // verbose 2, output json, rest ['branch:list']
 * ```
 */
export function splitGlobals(argv: readonly string[]): SplitArgv {
  const { error, ...split } = scanGlobals(argv);
  if (error) throw error;
  return split;
}

/**
 * {@link splitGlobals} that does not throw: a global option given wrong is left out and the
 * first such is returned as `error`, with everything else read. A hidden subcommand refused
 * for a bad `--output` still knows its `--repo` and `--actor`, to log the refusal there.
 *
 * @example
 * ```ts
 * scanGlobals(['branch:list', '--output', 'xml', '--repo', 'r']); // repo 'r', error: --output: expected …
 * ```
 */
export function scanGlobals(argv: readonly string[]): ScannedArgv {
  const globals: GlobalOptions = { verbose: 0, output: 'table' };
  const rest: string[] = [];
  let help = false;
  let error: CliError | undefined;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (/^-v+$/.test(token)) {
      globals.verbose += token.length - 1;
      continue;
    }
    if (token === '--verbose') {
      globals.verbose++;
      continue;
    }
    if (token === '-h' || token === '--help') {
      help = true;
      continue;
    }
    const match = /^--([a-z]+)(?:=(.*))?$/s.exec(token);
    if (match && VALUE_GLOBALS.has(match[1]!)) {
      const name = match[1]!;
      let value = match[2];
      if (value === undefined) {
        value = argv[++i];
        if (value === undefined) {
          error ??= new CliError('invalid_argument', `--${name}: a value is required`, { field: name });
          continue;
        }
      }
      try {
        if (name === 'output') globals.output = outputFormat(value);
        else (globals as unknown as Record<string, string>)[name] = value;
      } catch (refused) {
        error ??= refused as CliError;
      }
      continue;
    }
    rest.push(token);
  }
  return { globals, rest, help, ...(error ? { error } : {}) };
}

/** The hidden subcommand `argv` names, if its first non-global word is `<category>:<action>`. */
export function hiddenSubcommand(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') return undefined;
    const match = /^--([a-z]+)$/.exec(token);
    if (match && VALUE_GLOBALS.has(match[1]!)) {
      i++;
      continue;
    }
    if (token.startsWith('-')) continue;
    return HIDDEN_NAME.test(token) ? token : undefined;
  }
  return undefined;
}

/** How one subcommand argument reads from a command line. */
export type ArgKind = 'boolean' | 'list' | 'value';

/**
 * Parses `--key value`, `--key=value`, `--flag`, `--no-flag` and repeated
 * list options into an argument record. Keys stay as spelled (the registry
 * accepts kebab-case and snake_case); values stay strings (the registry
 * coerces them). A boolean flag takes a value only with `=`; any other
 * option always takes the next word, so a value may start with a dash.
 */
export function parseSubcommandArgs(tokens: readonly string[], kindOf: (key: string) => ArgKind | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const match = /^--([A-Za-z0-9][A-Za-z0-9_-]*)(?:=(.*))?$/s.exec(token);
    if (!match) {
      throw new CliError('invalid_argument', `unexpected ${JSON.stringify(token)}: subcommands take --name value options only`, {
        field: 'argv',
      });
    }
    let key = match[1]!;
    let value: unknown = match[2];
    const kind = kindOf(key);
    if (value === undefined) {
      if (kind === 'boolean') value = true;
      else if (kind === undefined && key.startsWith('no-') && kindOf(key.slice(3)) === 'boolean') {
        key = key.slice(3);
        value = false;
      } else if (kind === undefined && (tokens[i + 1] === undefined || tokens[i + 1]!.startsWith('--'))) value = true;
      else {
        value = tokens[++i];
        if (value === undefined) throw new CliError('invalid_argument', `--${key}: a value is required`, { field: key });
      }
    }
    if (kind === 'list') {
      const items =
        typeof value === 'string'
          ? value
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : [value];
      out[key] = [...((out[key] as unknown[] | undefined) ?? []), ...items];
    } else if (Object.hasOwn(out, key)) throw new CliError('invalid_argument', `--${key}: given twice`, { field: key });
    else out[key] = value;
  }
  return out;
}
