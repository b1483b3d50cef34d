/**
 * The common ways git refuses, through `GitRepository` in real repositories: each is a state
 * with its own code and advice (not `git_failed`, exit 1), with git's own text kept in
 * `details.git_output`, and nothing the user had in progress is undone.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempRepo } from '../../test/gitFixture.js';
import { WorkflowError } from '../errors.js';
import { exitCodeFor } from '../subcommands/exitCodes.js';
import { GitRepository } from './gitRepository.js';

/** Asserts the rejection's code, exit code, `details.reason`, message and that git's text is kept. */
function refusal(expected: { code: string; exit: number; reason: string; message: RegExp; git: RegExp }) {
  return (error: unknown) => {
    assert.ok(error instanceof WorkflowError, String(error));
    assert.equal(error.code, expected.code, error.message);
    assert.equal(exitCodeFor(error), expected.exit);
    assert.equal(error.details?.reason, expected.reason);
    assert.match(error.message, expected.message);
    assert.match(String(error.details?.git_output), expected.git);
    return true;
  };
}

describe('git refusals', () => {
  let repo: Awaited<ReturnType<typeof tempRepo>>;
  let git: GitRepository;
  const saved = process.env.HOME;
  before(async () => {
    repo = await tempRepo('git-failure-');
    process.env.HOME = repo.root;
    git = new GitRepository(repo.root);
  });
  after(async () => {
    process.env.HOME = saved;
    await repo.cleanup();
  });

  test('a directory that is no repository is not_found (exit 3)', async () => {
    const plain = await mkdtemp(join(tmpdir(), 'not-a-repo-'));
    try {
      await assert.rejects(
        new GitRepository(plain).listBranches(),
        refusal({ code: 'not_found', exit: 3, reason: 'not_a_repository', message: /is not a git repository$/, git: /fatal: not a git/ }),
      );
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });

  test('branches: unmerged, checked out, already there', async () => {
    await git.checkoutBranch('unmerged', { create: true });
    await writeFile(join(repo.root, 'u.txt'), 'u\n');
    await git.commit('unmerged work');
    await git.checkoutBranch('main');
    await assert.rejects(
      git.deleteBranch('unmerged'),
      refusal({
        code: 'conflict',
        exit: 5,
        reason: 'branch_not_merged',
        message: /^branch "unmerged" is not fully merged: pass --force/,
        git: /git branch -D unmerged/,
      }),
    );
    assert.match(repo.git('branch'), /unmerged/, 'still there');
    await assert.rejects(
      git.deleteBranch('main'),
      refusal({
        code: 'conflict',
        exit: 5,
        reason: 'branch_checked_out',
        message: /^branch "main" is checked out at /,
        git: /Cannot delete/,
      }),
    );
    await assert.rejects(
      git.createBranch('unmerged'),
      refusal({ code: 'already_exists', exit: 5, reason: 'branch_exists', message: /^branch "unmerged" already exists$/, git: /fatal/ }),
    );
  });

  test('nothing to commit, and local changes in the way of a checkout or a rebase', async () => {
    await assert.rejects(
      git.commit('nothing'),
      refusal({
        code: 'conflict',
        exit: 5,
        reason: 'nothing_to_commit',
        message: /^nothing to commit.*--allow-empty/,
        git: /nothing to commit/,
      }),
    );
    await writeFile(join(repo.root, 'u.txt'), 'local edit on main\n');
    await git.run(['add', 'u.txt']);
    await git.commit('u on main');
    await writeFile(join(repo.root, 'u.txt'), 'uncommitted\n');
    await assert.rejects(
      git.checkoutBranch('unmerged'),
      refusal({
        code: 'conflict',
        exit: 5,
        reason: 'local_changes',
        message: /^local changes would be overwritten: u\.txt: commit or stash/,
        git: /Aborting/,
      }),
    );
    await assert.rejects(
      git.rebase({ onto: 'unmerged' }),
      refusal({ code: 'conflict', exit: 5, reason: 'local_changes', message: /commit or stash them first/, git: /cannot rebase/ }),
    );
    assert.equal(repo.git('status', '--porcelain').trim(), 'M u.txt', 'the local change is kept');
    assert.equal(await git.currentBranch(), 'main');
  });

  test('a conflicting stash is kept; a rebase already in progress is not aborted', async () => {
    await git.stashPush();
    await writeFile(join(repo.root, 'u.txt'), 'committed meanwhile\n');
    await git.commit('meanwhile');
    await assert.rejects(
      git.stashPop(),
      refusal({
        code: 'conflict',
        exit: 5,
        reason: 'merge_conflict',
        message: /^the stash conflicts with the working tree: u\.txt/,
        git: /CONFLICT/,
      }),
    );
    assert.equal((await git.stashList()).length, 1, 'the stash is kept');
    repo.git('reset', '--hard', '--quiet');

    // The user starts a rebase that stops on a conflict.
    await assert.rejects(git.run(['rebase', 'unmerged']), { code: 'conflict' });
    await assert.rejects(
      git.rebase({ onto: 'unmerged' }),
      refusal({ code: 'conflict', exit: 5, reason: 'unfinished_merge', message: /middle of a merge or rebase/, git: /rebase/ }),
    );
    assert.ok(existsSync(join(repo.root, '.git', 'rebase-merge')), "the user's rebase is still in progress");
    repo.git('rebase', '--abort');
  });

  test('a detached HEAD', async () => {
    repo.git('switch', '--quiet', '--detach', 'HEAD');
    await assert.rejects(
      git.run(['branch', '-m', 'renamed']),
      refusal({ code: 'conflict', exit: 5, reason: 'detached_head', message: /^HEAD is detached/, git: /not on any/ }),
    );
    repo.git('switch', '--quiet', 'main');
  });

  test('anything else stays git_failed (exit 1), with git text in the message and details', async () => {
    await assert.rejects(git.run(['no-such-git-command']), (error: unknown) => {
      assert.ok(error instanceof WorkflowError);
      assert.equal(error.code, 'git_failed');
      assert.match(error.message, /^git no-such-git-command: .*not a git command/);
      assert.match(String(error.details?.git_output), /not a git command/);
      return true;
    });
  });
});
