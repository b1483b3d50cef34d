/**
 * @module gitFailure
 * Turns a failed `git` run into a `WorkflowError` a caller can act on. The
 * common refusals (not a repository, an unmerged branch, local changes in
 * the way, a merge conflict, a detached HEAD, nothing to commit, a name
 * already taken) are states, not internal failures: they get their own
 * code (so `not_found` exits 3 and `conflict`/`already_exists` exit 5), a
 * message that says what to do, and `details.reason` for tools to branch
 * on. Anything else stays `git_failed` (exit 1). git's own text is kept in
 * `details.git_output` either way. git runs with `LC_ALL=C`, so its
 * messages are the English ones matched here.
 */
import { WorkflowError, type WorkflowErrorCode } from '../errors.js';

/** Why git refused, when it is one of the states {@link gitFailure} recognizes. */
export type GitFailureReason =
  | 'not_a_repository'
  | 'branch_not_merged'
  | 'branch_checked_out'
  | 'branch_exists'
  | 'path_exists'
  | 'local_changes'
  | 'merge_conflict'
  | 'unfinished_merge'
  | 'detached_head'
  | 'nothing_to_commit';

interface Rule {
  reason: GitFailureReason;
  code: WorkflowErrorCode;
  pattern: RegExp;
  message: (match: RegExpExecArray, run: GitRun) => string;
}

/** One failed run: what was asked, where, and everything git printed. */
export interface GitRun {
  args: readonly string[];
  cwd: string;
  stdout: string;
  stderr: string;
  exitCode: unknown;
}

/** Paths git lists (tab-indented) under "would be overwritten" and "Merge conflict in". */
function conflictPaths(output: string): string[] {
  const listed = [...output.matchAll(/^\t(.+)$/gm)].map((m) => m[1]!.trim());
  const conflicted = [...output.matchAll(/Merge conflict in (.+)$/gm)].map((m) => m[1]!.trim());
  return [...new Set([...conflicted, ...listed])];
}

const names = (paths: string[]) => (paths.length ? `: ${paths.join(', ')}` : '');

// Order matters: a conflicted `stash pop` also prints "no changes added to commit".
const RULES: Rule[] = [
  {
    reason: 'not_a_repository',
    code: 'not_found',
    pattern: /not a git repository/,
    message: (_, run) => `${run.cwd} is not a git repository`,
  },
  {
    reason: 'branch_not_merged',
    code: 'conflict',
    pattern: /branch '(.+?)' is not fully merged/i,
    message: (m) => `branch "${m[1]}" is not fully merged: pass --force to delete it anyway`,
  },
  {
    reason: 'branch_checked_out',
    code: 'conflict',
    pattern: /(?:Cannot delete branch '(.+?)' checked out|'(.+?)' is already (?:checked out|used by worktree)) at '(.+?)'/,
    message: (m) => `branch "${m[1] ?? m[2]}" is checked out at ${m[3]}: switch that worktree to another branch first`,
  },
  {
    reason: 'branch_exists',
    code: 'already_exists',
    pattern: /a branch named '(.+?)' already exists/,
    message: (m) => `branch "${m[1]}" already exists`,
  },
  {
    reason: 'path_exists',
    code: 'already_exists',
    pattern: /fatal: '(.+?)' already exists/,
    message: (m) => `${m[1]} already exists`,
  },
  {
    reason: 'merge_conflict',
    code: 'conflict',
    pattern: /^CONFLICT \(|could not apply/m,
    message: (_, run) => {
      const paths = names(conflictPaths(`${run.stdout}\n${run.stderr}`));
      // git leaves a conflicted stash applied, with markers in the files, and keeps the stash entry.
      if (run.args[0] === 'stash')
        return `the stash conflicts with the working tree${paths}: resolve the conflict markers (the stash is kept)`;
      return `git ${run.args[0]} stopped on a merge conflict${paths}`;
    },
  },
  {
    reason: 'local_changes',
    code: 'conflict',
    pattern:
      /Your local changes to the following files would be overwritten|cannot rebase: (?:You have unstaged|Your index contains uncommitted) changes/,
    message: (_, run) => `local changes would be overwritten${names(conflictPaths(run.stderr))}: commit or stash them first, then retry`,
  },
  {
    reason: 'unfinished_merge',
    code: 'conflict',
    pattern: /unmerged files|needs merge|is unmerged|while (?:rebasing|merging)|already a rebase-merge directory|You have unmerged paths/,
    message: () => 'the repository is in the middle of a merge or rebase with unresolved conflicts: resolve or abort it first',
  },
  {
    reason: 'detached_head',
    code: 'conflict',
    pattern: /not currently on a branch|while not on any/,
    message: () => 'HEAD is detached (on no branch): check out a branch first',
  },
  {
    reason: 'nothing_to_commit',
    code: 'conflict',
    pattern: /nothing to commit|no changes added to commit/,
    message: () => 'nothing to commit: the working tree has no changes (pass --allow-empty for an empty commit)',
  },
];

/** git's text, trimmed to what a person reads: the last 20 lines. */
function gitOutput(run: GitRun): string {
  return `${run.stderr}\n${run.stdout}`.trim().split('\n').slice(-20).join('\n');
}

/**
 * The error for a failed git run: a recognized state with its own code and advice, or `git_failed`.
 *
 * @example
 * ```ts
 * gitFailure({ args: ['branch', '-d', 'x'], cwd: '/repo', stdout: '', stderr: "error: The branch 'x' is not fully merged.", exitCode: 1 });
 * // WorkflowError conflict: branch "x" is not fully merged: pass --force to delete it anyway
 * ```
 */
export function gitFailure(run: GitRun, cause?: unknown): WorkflowError {
  const text = `${run.stderr}\n${run.stdout}`;
  const details = { exit_code: run.exitCode ?? null, git_output: gitOutput(run) };
  for (const rule of RULES) {
    const match = rule.pattern.exec(text);
    if (match) return new WorkflowError(rule.code, rule.message(match, run), { cause, details: { reason: rule.reason, ...details } });
  }
  const last = (run.stderr.trim() || run.stdout.trim() || String((cause as Error | undefined)?.message ?? 'failed'))
    .split('\n')
    .slice(-5)
    .join('\n');
  return new WorkflowError('git_failed', `git ${run.args[0]}: ${last}`, { cause, details });
}
