/**
 * @module subcommandRefusal
 * A hidden subcommand refused before its body runs (a global option given wrong, no repository,
 * a config, actor or database that does not open, arguments that do not parse) is an invocation
 * all the same, and a tamper-evident log that misses refused attempts has a gap. Each refusal
 * gets its line in `.agileplus/audit.jsonl`, with its exit code and `result.error` (the
 * refusal's code and message), wherever a log can be opened. Where none can (no git repository,
 * or a log that cannot take the line), the error the user sees says so instead.
 */
import { stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { SUBCOMMAND_LOG_PATH, SubcommandAuditLog } from '@switchyard/workflow';
import { GitRepository } from '@switchyard/workflow/git';
import { type ArgKind, parseSubcommandArgs } from '../argv.js';
import { loadConfig } from '../config.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { errorBody, exitCodeOf } from '../output.js';
import { excludeLocalState, type Runtime, resolveActor, resolveRepo, tornLogAdvice } from '../runtime.js';

/** A refused invocation as the caller reports it: the error (saying when it went unlogged) and the exit code. */
export interface Refusal {
  error: unknown;
  exitCode: number;
}

/** What was known when a hidden subcommand was refused. */
export interface RefusedInvocation {
  command: string;
  /** The subcommand's own words (global options taken out). */
  tokens: readonly string[];
  globals: GlobalOptions;
  io: CliIO;
  /** How each argument reads, from the subcommand's schema. */
  kindOf: (key: string) => ArgKind | undefined;
  /** The runtime and its log, when setup got that far. */
  runtime?: Runtime;
  log?: SubcommandAuditLog;
  /** Opening the log was what failed: its error already says the log cannot be written. */
  logFailed?: boolean;
}

/** Why a refusal could not be logged (the message is the reason, shown to the user). */
class NotLoggable extends Error {}

/**
 * Records a refusal in the audit log: the runtime's log when it opened, else a log opened for
 * this line alone. Returns what to report; never throws.
 *
 * @example
 * ```ts
 * const { error, exitCode } = await recordRefusal({ command: 'branch:list', tokens: [], globals, io, kindOf }, failure);
 * reportError(io, globals, error);
 * ```
 */
export async function recordRefusal(invocation: RefusedInvocation, error: unknown): Promise<Refusal> {
  const exitCode = await exitCodeOf(error);
  if (invocation.logFailed) return { error, exitCode };
  const { code, message, details } = errorBody(error).error;
  const line = {
    command: invocation.command,
    args: loggedArgs(invocation),
    exit_code: exitCode,
    duration_ms: 0,
    result: { error: { code, message } },
  };
  try {
    if (invocation.log && invocation.runtime) {
      await invocation.log.record({ ...line, actor: invocation.runtime.actor });
    } else {
      // A `--repo` given wrong (or without its value) leaves the repository unknown: the working
      // directory's would be the wrong place for the line.
      if (details?.field === 'repo') throw new NotLoggable(`no git repository to hold ${SUBCOMMAND_LOG_PATH}`);
      const { log, actor } = await openLogAlone(invocation);
      try {
        await log.record({ ...line, actor });
      } finally {
        await log.close();
      }
    }
    return { error, exitCode };
  } catch (failure) {
    const reason = failure instanceof NotLoggable ? failure.message : errorBody(tornLogAdvice(failure)).error.message;
    return { error: notLogged(error, reason), exitCode };
  }
}

/** The arguments as a successful run would log them, or the words when they do not parse. */
function loggedArgs(invocation: RefusedInvocation): Record<string, unknown> {
  try {
    return parseSubcommandArgs(invocation.tokens, invocation.kindOf);
  } catch {
    return { argv: [...invocation.tokens] };
  }
}

/** The repository's log, opened without the runtime (which is what failed). */
async function openLogAlone(invocation: RefusedInvocation): Promise<{ log: SubcommandAuditLog; actor: string }> {
  const { globals, io } = invocation;
  const repoRoot = await resolveRepo(globals, io).catch(() => {
    throw new NotLoggable(`no git repository to hold ${SUBCOMMAND_LOG_PATH}`);
  });
  const config = await loadConfig(repoRoot, globals.config, io.env, io.cwd).catch(() => undefined);
  // A log's first line binds it to its origin, named after the config's repo_name: without the
  // config, only a log that already has lines can take one.
  if (!config && !((await stat(join(repoRoot, SUBCOMMAND_LOG_PATH)).catch(() => undefined))?.size ?? 0))
    throw new NotLoggable(`${SUBCOMMAND_LOG_PATH} would be started without the config that names it (repo_name)`);
  const actor = await refusalActor(globals, io, repoRoot);
  const log = await SubcommandAuditLog.open(repoRoot, { repoName: config?.repo_name ?? basename(repoRoot) });
  await excludeLocalState(new GitRepository(repoRoot));
  return { log, actor };
}

/** Who is refused: the actor as usual, or, when the given `--actor`/`YARD_ACTOR` is the refusal, git's user or the OS user. */
async function refusalActor(globals: GlobalOptions, io: CliIO, repoRoot: string): Promise<string> {
  try {
    return await resolveActor(globals, io, repoRoot);
  } catch {
    const { actor: _refused, ...others } = globals;
    return resolveActor(others, { ...io, env: { ...io.env, YARD_ACTOR: undefined } }, repoRoot);
  }
}

/** The refusal, saying that it is not in the audit log and why (`details.audit_logged: false`). */
function notLogged(error: unknown, reason: string): Error {
  const { code, message, details } = errorBody(error).error;
  return Object.assign(new Error(`${message}; not audit-logged: ${reason}`, { cause: error }), {
    code,
    details: { ...details, audit_logged: false },
  });
}
