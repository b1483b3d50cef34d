/**
 * @module gitRepository
 * A small library over the system `git`, always through `execFile` with an
 * argument array (never a shell). Every caller-supplied value is checked
 * first (no option-like values, valid refs, paths confined to the
 * repository). Defaults: base `main`, diffs from `HEAD~1` to `HEAD` with 3
 * context lines, stash index 0 (the latest).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { NotFoundError, WorkflowError } from '../errors.js';
import { gitFailure } from './gitFailure.js';
import { assertBranchName, assertRevision, assertSafeArgument, confinedPath } from './safety.js';

/** Documented defaults of the git operations. */
export const GIT_DEFAULTS = {
  base: 'main',
  diffFrom: 'HEAD~1',
  diffTo: 'HEAD',
  contextLines: 3,
  stashIndex: 0,
  logLimit: 20,
  worktreeDir: '.worktrees',
} as const;

/** A worktree and, when its branch follows `<feature_slug>/wp<NN>`, the feature and work package it serves. */
export interface Worktree {
  path: string;
  branch: string | null;
  feature_slug: string | null;
  wp_id: number | null;
  /** Present when the worktree is locked: the lock's reason (`''` without one). git's own `initializing` marks an add that never finished. */
  locked?: string;
}

export interface BranchInfo {
  name: string;
  commit: string;
  current: boolean;
  upstream: string | null;
}

export interface CommitInfo {
  commit: string;
  author: string;
  date: string;
  subject: string;
}

export interface DiffStat {
  files: { path: string; insertions: number; deletions: number }[];
  files_changed: number;
  insertions: number;
  deletions: number;
}

export interface StashEntry {
  index: number;
  ref: string;
  message: string;
}

/** What `worktree:add` records about a worktree beyond its branch name. */
export interface WorktreeMetadata {
  feature_slug?: string;
  wp_id?: number;
}

/** Recorded metadata lives in git's own administrative directory of the worktree, so it goes when the worktree goes. */
const WORKTREE_METADATA_FILE = 'agileplus-worktree.json';

/** The metadata recorded for a linked worktree (its `.git` file names the administrative directory); `{}` without any. */
async function readWorktreeMetadata(path: string): Promise<WorktreeMetadata> {
  try {
    const pointer = /^gitdir: (.+)$/m.exec(await readFile(join(path, '.git'), 'utf8'));
    if (!pointer) return {};
    const recorded = JSON.parse(await readFile(join(resolve(path, pointer[1]!.trim()), WORKTREE_METADATA_FILE), 'utf8')) as Record<
      string,
      unknown
    >;
    const out: WorktreeMetadata = {};
    if (typeof recorded.feature_slug === 'string') out.feature_slug = recorded.feature_slug;
    if (typeof recorded.wp_id === 'number') out.wp_id = recorded.wp_id;
    return out;
  } catch {
    return {}; // a missing worktree directory or no recorded metadata: the branch name is all there is
  }
}

/** `Name <email>`, as git's `--author` takes it without searching the history for a match. */
function assertAuthor(author: string): string {
  const value = assertSafeArgument(author, 'author');
  if (!/^[^<>\n]+ <[^<>\s]+>$/.test(value))
    throw new WorkflowError('invalid_argument', `author: expected "Name <email>", got ${JSON.stringify(value)}`, {
      details: { field: 'author' },
    });
  return value;
}

/** The branch a work package's worktree uses: `<feature_slug>/wp<NN>`. */
export function workPackageBranch(featureSlug: string, sequence: number): string {
  return `${featureSlug}/wp${String(sequence).padStart(2, '0')}`;
}

/** Where a work package's worktree goes by default, relative to the repository. */
function workPackageWorktreePath(featureSlug: string, sequence: number): string {
  return join(GIT_DEFAULTS.worktreeDir, `${featureSlug}-wp${String(sequence).padStart(2, '0')}`);
}

const WP_BRANCH = /^([a-z0-9][a-z0-9-]{0,63})\/wp(\d+)$/;

function checkIndex(index: unknown): number {
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 10_000) {
    throw new WorkflowError('invalid_argument', 'index: a stash index is an integer from 0 (the latest)', { details: { field: 'index' } });
  }
  return index;
}

/**
 * Git operations on one repository.
 *
 * @example
 * ```ts
 * const git = new GitRepository('/path/to/repo');
 * await git.createBranch('feature/login');              // from main
 * const diff = await git.diff();                         // HEAD~1..HEAD, 3 lines of context
 * ```
 */
export class GitRepository {
  readonly root: string;
  private readonly gitBinary: string;
  /** The repository's common git directory, once asked (a work tree's never changes; `yard` asks once per exclude line). */
  private commonGitDir: string | undefined;

  constructor(root: string, options: { gitBinary?: string } = {}) {
    this.root = resolve(root);
    this.gitBinary = options.gitBinary ?? 'git';
  }

  /**
   * Runs git with `args` in `cwd` (default the root). A failure rejects with the state git
   * refused on (see `gitFailure` in git/gitFailure.ts: not_found, conflict, already_exists) or `git_failed`,
   * with git's own text in `details.git_output`.
   */
  run(args: readonly string[], options: { cwd?: string; input?: string; env?: Record<string, string> } = {}): Promise<string> {
    const cwd = options.cwd ?? this.root;
    return new Promise((resolvePromise, reject) => {
      const child = execFile(
        this.gitBinary,
        args,
        {
          cwd,
          maxBuffer: 64 * 1024 * 1024,
          env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0', ...options.env },
        },
        (error, stdout, stderr) => {
          if (error) reject(gitFailure({ args, cwd, stdout, stderr, exitCode: (error as { code?: unknown }).code }, error));
          else resolvePromise(stdout);
        },
      );
      if (options.input !== undefined) child.stdin?.end(options.input);
    });
  }

  /**
   * Refuses a revision, branch or stash that does not name a commit with not_found (exit 3):
   * a typo is the caller's, not an internal git failure (exit 1), and a rebase onto nothing is
   * no conflict.
   */
  private async requireCommit(what: string, key: string, rev = key, cwd?: string): Promise<void> {
    try {
      await this.run(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], cwd ? { cwd } : {});
    } catch (error) {
      if (error instanceof WorkflowError && error.code === 'git_failed') throw new NotFoundError(what, key);
      throw error;
    }
  }

  // ---- branches ----

  /** Creates `name` from `base` (default `main`); with `checkout`, switches to it. */
  async createBranch(name: string, options: { base?: string; checkout?: boolean } = {}): Promise<BranchInfo> {
    assertBranchName(name);
    const base = assertRevision(options.base ?? GIT_DEFAULTS.base, 'base');
    await this.requireCommit('revision', base);
    await this.run(['branch', '--no-track', '--end-of-options', name, base]);
    if (options.checkout) await this.run(['switch', name]);
    return (await this.listBranches()).find((b) => b.name === name)!;
  }

  /** Switches to `name`; with `create`, creates it from the current commit first. */
  async checkoutBranch(name: string, options: { create?: boolean } = {}): Promise<BranchInfo> {
    assertBranchName(name);
    if (!options.create) await this.requireCommit('branch', name, `refs/heads/${name}`);
    await this.run(options.create ? ['switch', '-c', name] : ['switch', name]);
    return (await this.listBranches()).find((b) => b.name === name)!;
  }

  /**
   * Deletes `name`; `force` deletes even when it is not merged. With `remote`, deletes the
   * branch on that remote instead (`git push <remote> --delete`), leaving any local branch.
   */
  async deleteBranch(
    name: string,
    options: { force?: boolean; remote?: string } = {},
  ): Promise<{ name: string; deleted: true; remote?: string }> {
    assertBranchName(name);
    if (options.remote !== undefined) {
      const remote = await this.requireRemote(options.remote);
      const heads = await this.run(['ls-remote', '--heads', '--end-of-options', remote, `refs/heads/${name}`]);
      if (heads.trim() === '') throw new NotFoundError('branch', `${remote}/${name}`);
      await this.run(['push', '--delete', '--end-of-options', remote, `refs/heads/${name}`]);
      return { name, deleted: true, remote };
    }
    await this.requireCommit('branch', name, `refs/heads/${name}`);
    await this.run(['branch', options.force ? '-D' : '-d', '--end-of-options', name]);
    return { name, deleted: true };
  }

  /** A configured remote's name, or `not_found` (field `remote`). */
  private async requireRemote(remote: string): Promise<string> {
    const name = assertSafeArgument(remote, 'remote');
    const remotes = (await this.run(['remote'])).split('\n').filter(Boolean);
    if (!remotes.includes(name))
      throw new WorkflowError('not_found', `no remote ${JSON.stringify(name)}; remotes: ${remotes.join(', ') || 'none'}`, {
        details: { field: 'remote' },
      });
    return name;
  }

  async renameBranch(from: string, to: string): Promise<BranchInfo> {
    assertBranchName(from, 'from');
    assertBranchName(to, 'to');
    await this.requireCommit('branch', from, `refs/heads/${from}`);
    await this.run(['branch', '-m', '--end-of-options', from, to]);
    return (await this.listBranches()).find((b) => b.name === to)!;
  }

  /**
   * Local branches, or with `remote` the remote-tracking ones (`origin/main`; as of the last
   * fetch or push). `pattern` is a glob over the short name (`feat/*`, `origin/wp*`).
   */
  async listBranches(options: { pattern?: string; remote?: boolean } = {}): Promise<BranchInfo[]> {
    const namespace = options.remote ? 'refs/remotes' : 'refs/heads';
    const pattern = options.pattern === undefined ? namespace : `${namespace}/${assertSafeArgument(options.pattern, 'pattern')}`;
    const out = await this.run([
      'for-each-ref',
      '--format=%(refname:short)%00%(objectname)%00%(HEAD)%00%(upstream:short)%00%(symref)',
      '--end-of-options',
      pattern,
    ]);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\0'))
      .filter(([, , , , symref]) => !symref) // origin/HEAD only points at another remote branch
      .map(([name, commit, head, upstream]) => ({ name: name!, commit: commit!, current: head === '*', upstream: upstream || null }));
  }

  /** The checked-out branch, or null on a detached HEAD. */
  async currentBranch(): Promise<string | null> {
    const out = await this.run(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '');
    return out.trim() || null;
  }

  // ---- commits ----

  /**
   * Commits staged changes; by default stages everything first (`all`), or only `paths`. The
   * message goes through stdin. `author` (`Name <email>`) overrides the configured identity.
   */
  async commit(
    message: string,
    options: { all?: boolean; paths?: string[]; allowEmpty?: boolean; author?: string; cwd?: string } = {},
  ): Promise<CommitInfo> {
    if (typeof message !== 'string' || message.trim() === '')
      throw new WorkflowError('invalid_argument', 'message: required', { details: { field: 'message' } });
    const cwd = options.cwd ?? this.root;
    if (options.paths && options.paths.length > 0) {
      const paths = await Promise.all(options.paths.map((p) => confinedPath(cwd, p, 'paths')));
      await this.run(['add', '--', ...paths.map((p) => relative(cwd, p) || '.')], { cwd });
    } else if (options.all ?? true) {
      await this.run(['add', '-A'], { cwd });
    }
    const author = options.author === undefined ? [] : [`--author=${assertAuthor(options.author)}`];
    await this.run(['commit', '--file=-', ...author, ...(options.allowEmpty ? ['--allow-empty'] : [])], { cwd, input: message });
    return (await this.log({ limit: 1, cwd }))[0]!;
  }

  /**
   * Amends the last commit, keeping its message unless a new one is given. git refuses an
   * amend that leaves the commit with no changes unless `allowEmpty`.
   */
  async amend(options: { message?: string; all?: boolean; allowEmpty?: boolean } = {}): Promise<CommitInfo> {
    if (options.all ?? true) await this.run(['add', '-A']);
    const allowEmpty = options.allowEmpty ? ['--allow-empty'] : [];
    await this.run(
      options.message ? ['commit', '--amend', '--file=-', ...allowEmpty] : ['commit', '--amend', '--no-edit', ...allowEmpty],
      options.message ? { input: options.message } : {},
    );
    return (await this.log({ limit: 1 }))[0]!;
  }

  /**
   * Commits changes as a `fixup!` of `target`, for a later autosquash rebase. A `message` goes
   * in the fixup's body (git keeps the `fixup! <subject>` line autosquash looks for).
   */
  async fixup(target: string, options: { all?: boolean; message?: string } = {}): Promise<CommitInfo> {
    const rev = assertRevision(target, 'target');
    if (options.all ?? true) await this.run(['add', '-A']);
    await this.run(['commit', `--fixup=${rev}`, ...(options.message !== undefined ? [`--message=${options.message}`] : [])]);
    return (await this.log({ limit: 1 }))[0]!;
  }

  /**
   * Rebases the current branch onto `onto` (default `main`), squashing fixups. A rebase that
   * stops on a conflict is aborted and reported as `conflict`; one git refuses to start (local
   * changes, a merge or rebase already in progress) is reported as such and aborts nothing, so
   * a rebase the user had in progress is left alone.
   */
  async rebase(options: { onto?: string; autosquash?: boolean } = {}): Promise<{ onto: string; head: string }> {
    const onto = assertRevision(options.onto ?? GIT_DEFAULTS.base, 'onto');
    await this.requireCommit('revision', onto);
    const args = (options.autosquash ?? true) ? ['rebase', '-i', '--autosquash', onto] : ['rebase', onto];
    try {
      // GIT_SEQUENCE_EDITOR=true accepts the generated todo list: an interactive rebase without a terminal.
      await this.run(args, { env: { GIT_SEQUENCE_EDITOR: 'true', GIT_EDITOR: 'true' } });
    } catch (error) {
      if (!(error instanceof WorkflowError) || error.details?.reason !== 'merge_conflict') throw error;
      await this.run(['rebase', '--abort']).catch(() => undefined);
      throw new WorkflowError('conflict', `rebase onto ${onto} was aborted, the branch is unchanged: ${error.message}`, {
        cause: error,
        details: error.details,
      });
    }
    return { onto, head: (await this.run(['rev-parse', 'HEAD'])).trim() };
  }

  /** The newest commits first (default 20) reachable from `rev` (default HEAD). */
  async log(options: { limit?: number; rev?: string; cwd?: string } = {}): Promise<CommitInfo[]> {
    const limit = options.limit ?? GIT_DEFAULTS.logLimit;
    if (!Number.isInteger(limit) || limit < 1)
      throw new WorkflowError('invalid_argument', 'limit: a positive integer', { details: { field: 'limit' } });
    const rev = assertRevision(options.rev ?? 'HEAD', 'rev');
    await this.requireCommit('revision', rev, rev, options.cwd);
    const out = await this.run(
      ['log', `--max-count=${limit}`, '--format=%H%x00%an%x00%aI%x00%s', '--end-of-options', rev],
      options.cwd ? { cwd: options.cwd } : {},
    );
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [commit, author, date, subject] = line.split('\0');
        return { commit: commit!, author: author!, date: date!, subject: subject! };
      });
  }

  /** Commit ids in `from..to`, oldest first (what a branch added). */
  async commitsBetween(from: string, to = 'HEAD', cwd?: string): Promise<string[]> {
    const range = `${assertRevision(from, 'from')}..${assertRevision(to, 'to')}`;
    const out = await this.run(['rev-list', '--reverse', '--end-of-options', range], cwd ? { cwd } : {});
    return out.split('\n').filter(Boolean);
  }

  // ---- diffs ----

  private async diffArgs(options: { from?: string; to?: string; paths?: string[]; cwd?: string }): Promise<string[]> {
    const from = assertRevision(options.from ?? GIT_DEFAULTS.diffFrom, 'from');
    const to = assertRevision(options.to ?? GIT_DEFAULTS.diffTo, 'to');
    const cwd = options.cwd ?? this.root;
    for (const rev of new Set([from, to])) await this.requireCommit('revision', rev, rev, cwd);
    const paths = await Promise.all((options.paths ?? []).map((p) => confinedPath(cwd, p, 'paths')));
    return ['--end-of-options', from, to, '--', ...paths.map((p) => relative(cwd, p) || '.')];
  }

  /**
   * Unified diff from `from` (default `HEAD~1`) to `to` (default `HEAD`) with `context` lines
   * (default 3); with `stat`, git's diffstat of the same range instead of the patch.
   */
  async diff(
    options: { from?: string; to?: string; context?: number; stat?: boolean; paths?: string[]; cwd?: string; field?: string } = {},
  ): Promise<string> {
    const context = options.context ?? GIT_DEFAULTS.contextLines;
    const field = options.field ?? 'context';
    if (!Number.isInteger(context) || context < 0 || context > 1000)
      throw new WorkflowError('invalid_argument', `${field}: an integer from 0 to 1000`, { details: { field } });
    const format = options.stat ? ['--stat'] : [`--unified=${context}`];
    return this.run(
      ['diff', '--no-color', '--no-ext-diff', ...format, ...(await this.diffArgs(options))],
      options.cwd ? { cwd: options.cwd } : {},
    );
  }

  /** Per-file insertions and deletions over the same range as {@link diff}. */
  async diffStat(options: { from?: string; to?: string; paths?: string[]; cwd?: string } = {}): Promise<DiffStat> {
    const out = await this.run(
      ['diff', '--no-color', '--no-ext-diff', '--numstat', ...(await this.diffArgs(options))],
      options.cwd ? { cwd: options.cwd } : {},
    );
    const files = out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [ins, del, ...path] = line.split('\t');
        // Binary files show "-": count them as changed with no line counts.
        return { path: path.join('\t'), insertions: ins === '-' ? 0 : Number(ins), deletions: del === '-' ? 0 : Number(del) };
      });
    return {
      files,
      files_changed: files.length,
      insertions: files.reduce((n, f) => n + f.insertions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
    };
  }

  // ---- stashes ----

  /** Stashes local changes; resolves `created: false` when there was nothing to stash. */
  async stashPush(options: { message?: string; includeUntracked?: boolean } = {}): Promise<{ created: boolean; entry: StashEntry | null }> {
    const before = (await this.stashList()).length;
    const args = ['stash', 'push'];
    if (options.includeUntracked) args.push('--include-untracked');
    if (options.message !== undefined) args.push(`--message=${options.message}`);
    await this.run(args);
    const list = await this.stashList();
    return list.length > before ? { created: true, entry: list[0]! } : { created: false, entry: null };
  }

  /** Applies and drops stash `index` (default 0, the latest). */
  async stashPop(options: { index?: number } = {}): Promise<{ index: number }> {
    const index = checkIndex(options.index ?? GIT_DEFAULTS.stashIndex);
    await this.requireStash(index);
    await this.run(['stash', 'pop', `stash@{${index}}`]);
    return { index };
  }

  async stashApply(options: { index?: number } = {}): Promise<{ index: number }> {
    const index = checkIndex(options.index ?? GIT_DEFAULTS.stashIndex);
    await this.requireStash(index);
    await this.run(['stash', 'apply', `stash@{${index}}`]);
    return { index };
  }

  async stashDrop(options: { index?: number } = {}): Promise<{ index: number }> {
    const index = checkIndex(options.index ?? GIT_DEFAULTS.stashIndex);
    await this.requireStash(index);
    await this.run(['stash', 'drop', `stash@{${index}}`]);
    return { index };
  }

  /** The patch of stash `index` (default 0). */
  async stashShow(options: { index?: number } = {}): Promise<string> {
    const index = checkIndex(options.index ?? GIT_DEFAULTS.stashIndex);
    await this.requireStash(index);
    return this.run(['stash', 'show', '--patch', '--no-color', `stash@{${index}}`]);
  }

  private requireStash(index: number): Promise<void> {
    return this.requireCommit('stash', `stash@{${index}}`);
  }

  async stashList(): Promise<StashEntry[]> {
    const out = await this.run(['stash', 'list', '--format=%gd%x00%gs']);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line, index) => {
        const [ref, message] = line.split('\0');
        return { index, ref: ref!, message: message ?? '' };
      });
  }

  // ---- worktrees ----

  /**
   * Adds a worktree. For a work package, the defaults are the branch
   * `<feature_slug>/wp<NN>` from `base` (default `main`) at
   * `.worktrees/<feature_slug>-wp<NN>`.
   */
  async addWorktree(options: {
    featureSlug?: string;
    wpSequence?: number;
    branch?: string;
    path?: string;
    base?: string;
    /** The feature and work package the worktree serves, recorded with it (read back by {@link listWorktrees}). */
    metadata?: WorktreeMetadata;
  }): Promise<Worktree> {
    const base = assertRevision(options.base ?? GIT_DEFAULTS.base, 'base');
    let branch = options.branch;
    let path = options.path;
    if (options.featureSlug !== undefined || options.wpSequence !== undefined) {
      if (!options.featureSlug || !/^[a-z0-9][a-z0-9-]{0,63}$/.test(options.featureSlug))
        throw new WorkflowError('invalid_argument', 'feature_slug: a feature slug is required', { details: { field: 'feature_slug' } });
      if (!Number.isInteger(options.wpSequence) || (options.wpSequence as number) < 1)
        throw new WorkflowError('invalid_argument', 'wp: a work-package sequence is required', { details: { field: 'wp' } });
      branch ??= workPackageBranch(options.featureSlug, options.wpSequence!);
      path ??= workPackageWorktreePath(options.featureSlug, options.wpSequence!);
    }
    if (!branch || !path)
      throw new WorkflowError('invalid_argument', 'branch and path are required without a feature slug and work package', {
        details: { field: 'branch' },
      });
    assertBranchName(branch, 'branch');
    await this.requireCommit('revision', base);
    const target = await confinedPath(this.root, path, 'path');
    await this.excludeWorktreeDir();
    const exists = (await this.listBranches()).some((b) => b.name === branch);
    await this.run(
      exists
        ? ['worktree', 'add', '--end-of-options', target, branch]
        : ['worktree', 'add', '-b', branch, '--end-of-options', target, base],
    );
    if (options.metadata && (options.metadata.feature_slug !== undefined || options.metadata.wp_id !== undefined)) {
      const adminDir = resolve(target, (await this.run(['rev-parse', '--git-dir'], { cwd: target })).trim());
      await writeFile(join(adminDir, WORKTREE_METADATA_FILE), `${JSON.stringify(options.metadata)}\n`);
    }
    return (await this.listWorktrees()).find((w) => w.path === target) ?? { path: target, branch, ...this.parseWorkPackageBranch(branch) };
  }

  /** Removes a worktree inside the repository; `force` discards its local changes. */
  async removeWorktree(path: string, options: { force?: boolean } = {}): Promise<{ path: string; removed: true }> {
    const target = await confinedPath(this.root, assertSafeArgument(path, 'path'), 'path');
    if (!(await this.listWorktrees()).some((w) => w.path === target))
      throw new WorkflowError('not_found', `${path} is not a worktree of this repository`, { details: { field: 'path' } });
    await this.run(['worktree', 'remove', ...(options.force ? ['--force'] : []), '--end-of-options', target]);
    return { path: target, removed: true };
  }

  async listWorktrees(): Promise<Worktree[]> {
    const out = await this.run(['worktree', 'list', '--porcelain']);
    const trees: Worktree[] = [];
    let current: Worktree | undefined;
    for (const line of out.split('\n')) {
      if (line.startsWith('worktree ')) {
        current = { path: line.slice('worktree '.length), branch: null, feature_slug: null, wp_id: null };
        trees.push(current);
      } else if (line.startsWith('branch ') && current) {
        current.branch = line.slice('branch '.length).replace(/^refs\/heads\//, '');
        Object.assign(current, this.parseWorkPackageBranch(current.branch));
      } else if ((line === 'locked' || line.startsWith('locked ')) && current) {
        current.locked = line.slice('locked '.length);
      }
    }
    for (const tree of trees.slice(1)) Object.assign(tree, await readWorktreeMetadata(tree.path));
    return trees;
  }

  /**
   * A work package's worktree: the one on its branch, or a new one from
   * `base`. A worktree git left `initializing` (a `git worktree add` killed
   * before it finished, as when the `yard implement` running it is killed)
   * is half checked out, or not yet on its branch, so git would refuse a new
   * one at its path as "already exists": it is discarded and added again.
   * Callers own the package (one active job per package), so no other add
   * of it can be in flight.
   */
  async workPackageWorktree(options: { featureSlug: string; wpSequence: number; base?: string }): Promise<Worktree> {
    const branch = workPackageBranch(options.featureSlug, options.wpSequence);
    const target = await confinedPath(this.root, workPackageWorktreePath(options.featureSlug, options.wpSequence), 'path');
    let trees = await this.listWorktrees();
    const interrupted = trees.filter((w) => w.locked === 'initializing' && (w.branch === branch || w.path === target));
    for (const tree of interrupted) await this.discardInterruptedWorktree(tree.path);
    if (interrupted.length > 0) trees = await this.listWorktrees();
    return trees.find((w) => w.branch === branch) ?? this.addWorktree(options);
  }

  private async discardInterruptedWorktree(path: string): Promise<void> {
    const worktrees = await confinedPath(this.root, GIT_DEFAULTS.worktreeDir, 'path');
    const target = await confinedPath(this.root, path, 'path');
    if (relative(worktrees, target).startsWith('..'))
      throw new WorkflowError('conflict', `${path} is an unfinished worktree outside ${GIT_DEFAULTS.worktreeDir}/: remove it by hand`, {
        details: { field: 'path' },
      });
    await this.run(['worktree', 'unlock', '--end-of-options', target]);
    // `remove` needs git's files in the directory; an add killed before it wrote them leaves a directory to delete.
    await this.run(['worktree', 'remove', '--force', '--end-of-options', target]).catch(async () => {
      if (existsSync(target)) await rm(target, { recursive: true, force: true });
    });
    await this.run(['worktree', 'prune']);
  }

  /** Forgets worktrees whose directories are gone. */
  async pruneWorktrees(): Promise<Worktree[]> {
    await this.run(['worktree', 'prune']);
    return this.listWorktrees();
  }

  private parseWorkPackageBranch(branch: string): { feature_slug: string | null; wp_id: number | null } {
    const match = WP_BRANCH.exec(branch);
    return match ? { feature_slug: match[1]!, wp_id: Number(match[2]) } : { feature_slug: null, wp_id: null };
  }

  /** Keeps `.worktrees/` out of `git status` through `.git/info/exclude` (never the tracked `.gitignore`). */
  private excludeWorktreeDir(): Promise<void> {
    return this.excludeFromStatus(`/${GIT_DEFAULTS.worktreeDir}/`);
  }

  /**
   * Adds a pattern to `.git/info/exclude` (once), so local state such as a
   * database file never shows in `git status` or lands in `add -A`; the
   * tracked `.gitignore` is never touched.
   */
  async excludeFromStatus(line: string): Promise<void> {
    this.commonGitDir ??= resolve(this.root, (await this.run(['rev-parse', '--git-common-dir'])).trim());
    const gitDir = this.commonGitDir;
    const exclude = join(gitDir, 'info', 'exclude');
    const text = await readFile(exclude, 'utf8').catch(() => '');
    if (text.split('\n').includes(line)) return;
    await mkdir(join(gitDir, 'info'), { recursive: true });
    await appendFile(exclude, `${text === '' || text.endsWith('\n') ? '' : '\n'}${line}\n`);
  }
}
