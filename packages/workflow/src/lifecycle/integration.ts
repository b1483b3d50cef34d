/**
 * @module integration
 * Merging a feature's branches without touching the user's checkout. The
 * work-package branches (`<slug>/wpNN`) come together on the feature
 * branch (`<slug>/feature`), and the feature branch goes into the target
 * branch. Every merge happens in a worktree of its own under `.worktrees/`;
 * a conflict aborts the merge and removes the worktree, so the repository
 * is left as it was: clean, on the branch it was on.
 */
import { WorkflowError } from '../errors.js';
import { GIT_DEFAULTS, type GitRepository, workPackageBranch } from '../git/gitRepository.js';
import { confinedPath } from '../git/safety.js';

/** The branch a feature's work packages are integrated on: `<slug>/feature`. */
export function featureBranch(slug: string): string {
  return `${slug}/feature`;
}

/** The work-package branches of a feature that exist, in sequence order. */
export async function workPackageBranches(git: GitRepository, slug: string, sequences: readonly number[]): Promise<string[]> {
  const existing = new Set((await git.listBranches()).map((b) => b.name));
  return [...sequences]
    .sort((a, b) => a - b)
    .map((seq) => workPackageBranch(slug, seq))
    .filter((name) => existing.has(name));
}

/** Whether a local branch exists. */
export async function branchExists(git: GitRepository, name: string): Promise<boolean> {
  return (await git.listBranches()).some((b) => b.name === name);
}

/** The commit a revision names. */
export async function revParse(git: GitRepository, rev: string, cwd?: string): Promise<string> {
  return (await git.run(['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`], cwd ? { cwd } : {})).trim();
}

const MERGE_IDENTITY = {
  GIT_AUTHOR_NAME: 'yard',
  GIT_AUTHOR_EMAIL: 'yard@localhost',
  GIT_COMMITTER_NAME: 'yard',
  GIT_COMMITTER_EMAIL: 'yard@localhost',
};

/**
 * Merges `branches` into the worktree at `cwd`, one by one (`--no-ff`, so each work package stays visible in the
 * history). A conflict aborts that merge and throws `conflict` naming the branch and the conflicted files.
 */
export async function mergeBranches(git: GitRepository, cwd: string, branches: readonly string[], what: string): Promise<void> {
  // A repository without an identity (a fresh CI machine) can still merge; a configured one wins over these.
  const identity = (await git.run(['config', 'user.email'], { cwd }).catch(() => '')).trim() ? {} : MERGE_IDENTITY;
  for (const branch of branches) {
    try {
      await git.run(['merge', '--no-ff', '--no-edit', '-m', `Merge ${branch} into ${what}`, '--end-of-options', branch], {
        cwd,
        env: identity,
      });
    } catch (error) {
      const files = (await git.run(['diff', '--name-only', '--diff-filter=U'], { cwd }).catch(() => '')).split('\n').filter(Boolean);
      await git.run(['merge', '--abort'], { cwd }).catch(() => undefined);
      throw new WorkflowError(
        'conflict',
        `merging ${branch} into ${what} conflicts${files.length ? ` in ${files.join(', ')}` : ''}; nothing was changed: resolve it on ${branch} and retry`,
        { cause: error, details: { reason: 'merge_conflict', branch, into: what, files } },
      );
    }
  }
}

/**
 * Runs `work` in a fresh worktree at `path` (on `branch`, created from `base` when new, or detached at `base`
 * when no branch is given) and removes the worktree afterwards, whatever happened.
 */
export async function inWorktree<T>(
  git: GitRepository,
  options: { path: string; base: string; branch?: string },
  work: (cwd: string) => Promise<T>,
): Promise<T> {
  // One left by a process killed mid-merge would make git refuse the path.
  const target = await confinedPath(git.root, options.path, 'path');
  if ((await git.listWorktrees()).some((w) => w.path === target)) await git.removeWorktree(target, { force: true });
  const tree = options.branch
    ? await git.addWorktree({ path: options.path, branch: options.branch, base: options.base })
    : await addDetached(git, target, options.base);
  try {
    return await work(tree.path);
  } finally {
    await git.removeWorktree(tree.path, { force: true }).catch(() => undefined);
  }
}

async function addDetached(git: GitRepository, target: string, base: string): Promise<{ path: string }> {
  await git.excludeFromStatus(`/${GIT_DEFAULTS.worktreeDir}/`);
  await git.run(['worktree', 'add', '--detach', '--end-of-options', target, await revParse(git, base)]);
  return { path: target };
}
