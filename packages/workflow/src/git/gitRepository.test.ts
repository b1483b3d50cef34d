import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempRepo } from '../../test/gitFixture.js';
import { WorkflowError } from '../errors.js';
import { GIT_DEFAULTS, GitRepository } from './gitRepository.js';

const code = (expected: string) => (e: unknown) => e instanceof WorkflowError && e.code === expected;

describe('GitRepository in a temporary repository', () => {
  let repo: Awaited<ReturnType<typeof tempRepo>>;
  let git: GitRepository;
  // Keep the test's own git config out of the user's: HOME points into the repo.
  const saved = process.env.HOME;
  before(async () => {
    repo = await tempRepo();
    process.env.HOME = repo.root;
    git = new GitRepository(repo.root);
  });
  after(async () => {
    process.env.HOME = saved;
    await repo.cleanup();
  });

  test('documented defaults', () => {
    assert.deepEqual(
      { ...GIT_DEFAULTS },
      { base: 'main', diffFrom: 'HEAD~1', diffTo: 'HEAD', contextLines: 3, stashIndex: 0, logLimit: 20, worktreeDir: '.worktrees' },
    );
  });

  test('branches: create from main by default, list, checkout, rename, delete', async () => {
    const main = (await git.listBranches()).find((b) => b.name === 'main')!;
    const created = await git.createBranch('feature/login');
    assert.equal(created.commit, main.commit, 'base defaults to main');
    assert.equal(created.current, false);
    await git.createBranch('from-first', { base: 'HEAD~1' });
    assert.notEqual((await git.listBranches()).find((b) => b.name === 'from-first')!.commit, main.commit);
    assert.equal((await git.checkoutBranch('feature/login')).current, true);
    assert.equal(await git.currentBranch(), 'feature/login');
    await git.checkoutBranch('scratch', { create: true });
    await git.checkoutBranch('main');
    assert.equal((await git.renameBranch('scratch', 'scratch-2')).name, 'scratch-2');
    assert.deepEqual(await git.deleteBranch('scratch-2'), { name: 'scratch-2', deleted: true });
    await assert.rejects(git.deleteBranch('scratch-2'), code('not_found'));
    await git.createBranch('with-checkout', { checkout: true });
    assert.equal(await git.currentBranch(), 'with-checkout');
    await git.checkoutBranch('main');
  });

  test('commits: create (stages all by default), amend, fixup, rebase with autosquash, log (default 20)', async () => {
    await git.checkoutBranch('topic', { create: true });
    await writeFile(join(repo.root, 'a.txt'), 'a\n');
    const first = await git.commit('add a');
    assert.equal(first.subject, 'add a');
    await writeFile(join(repo.root, 'b.txt'), 'b\n');
    const amended = await git.amend();
    assert.equal(amended.subject, 'add a', 'amend keeps the message by default');
    assert.ok(repo.git('show', '--name-only', '--format=', 'HEAD').includes('b.txt'));
    const renamed = await git.amend({ message: '--add a and b' });
    assert.equal(renamed.subject, '--add a and b', 'a message that looks like an option is just a message (sent on stdin)');
    await writeFile(join(repo.root, 'a.txt'), 'a fixed\n');
    const fix = await git.fixup('HEAD');
    assert.match(fix.subject, /^fixup! --add a and b/);
    const rebased = await git.rebase();
    assert.equal(rebased.onto, 'main');
    const log = await git.log();
    assert.deepEqual(
      log.map((c) => c.subject),
      ['--add a and b', 'second', 'initial'],
    );
    assert.equal(await readFile(join(repo.root, 'a.txt'), 'utf8'), 'a fixed\n');
    assert.equal((await git.log({ limit: 1 })).length, 1);
    await writeFile(join(repo.root, 'only.txt'), 'x');
    await writeFile(join(repo.root, 'left.txt'), 'y');
    const partial = await git.commit('only one', { paths: ['only.txt'] });
    assert.equal(partial.subject, 'only one');
    assert.match(repo.git('status', '--porcelain'), /\?\? left.txt/);
    await assert.rejects(git.commit('  '), code('invalid_argument'));
    await git.commit('left');
    await git.checkoutBranch('main');
  });

  test('a branch, revision or stash that does not exist is not_found (exit 3), before git runs; nothing changes', async () => {
    const head = repo.git('rev-parse', 'HEAD');
    const missing: [string, () => Promise<unknown>, string][] = [
      ['deleteBranch', () => git.deleteBranch('no-such-branch'), 'branch "no-such-branch"'],
      ['checkoutBranch', () => git.checkoutBranch('no-such-branch'), 'branch "no-such-branch"'],
      ['renameBranch', () => git.renameBranch('no-such-branch', 'renamed'), 'branch "no-such-branch"'],
      ['createBranch', () => git.createBranch('from-nothing', { base: 'no-such-base' }), 'revision "no-such-base"'],
      ['rebase', () => git.rebase({ onto: 'no-such-base' }), 'revision "no-such-base"'],
      ['log', () => git.log({ rev: 'deadbeef' }), 'revision "deadbeef"'],
      ['diff', () => git.diff({ from: 'v9.9.9' }), 'revision "v9.9.9"'],
      ['diffStat', () => git.diffStat({ to: 'no-such-tag' }), 'revision "no-such-tag"'],
      ['stashPop', () => git.stashPop({ index: 7 }), 'stash "stash@{7}"'],
      ['stashApply', () => git.stashApply({ index: 7 }), 'stash "stash@{7}"'],
      ['stashDrop', () => git.stashDrop({ index: 7 }), 'stash "stash@{7}"'],
      ['stashShow', () => git.stashShow({ index: 7 }), 'stash "stash@{7}"'],
      ['addWorktree', () => git.addWorktree({ featureSlug: 'f', wpSequence: 1, base: 'no-such-base' }), 'revision "no-such-base"'],
    ];
    for (const [name, call, what] of missing) {
      await assert.rejects(call(), (e: unknown) => {
        assert.ok(e instanceof WorkflowError && e.code === 'not_found', `${name}: ${(e as Error).message}`);
        assert.equal(e.message, `${what} does not exist`, name);
        return true;
      });
    }
    assert.equal(repo.git('rev-parse', 'HEAD'), head);
    assert.deepEqual(
      (await git.listBranches()).map((b) => b.name).filter((n) => n === 'from-nothing' || n === 'renamed'),
      [],
    );
    assert.ok(!existsSync(join(repo.root, GIT_DEFAULTS.worktreeDir, 'f-wp01')));
  });

  test('a conflicting rebase is aborted and reported as a conflict', async () => {
    await git.checkoutBranch('conflict-a', { create: true });
    await writeFile(join(repo.root, 'README.md'), 'mine\n');
    await git.commit('mine');
    await git.checkoutBranch('main');
    await git.checkoutBranch('conflict-b', { create: true });
    await writeFile(join(repo.root, 'README.md'), 'theirs\n');
    await git.commit('theirs');
    await assert.rejects(git.rebase({ onto: 'conflict-a' }), (e: unknown) => {
      assert.ok(code('conflict')(e));
      assert.match(
        (e as Error).message,
        /^rebase onto conflict-a was aborted, the branch is unchanged: git rebase stopped on a merge conflict: README.md/,
      );
      return true;
    });
    assert.equal(repo.git('status', '--porcelain'), '', 'the aborted rebase leaves a clean tree');
    await git.checkoutBranch('main');
  });

  test('diffs: HEAD~1..HEAD with 3 context lines by default; stat counts lines', async () => {
    const diff = await git.diff();
    assert.match(diff, /^-line 4$/m);
    assert.match(diff, /^\+line 4 changed$/m);
    assert.match(diff, /@@ -3,7 \+3,7 @@/, '3 lines of context on each side');
    assert.match(await git.diff({ context: 0 }), /@@ -6 \+6 @@/);
    assert.equal(await git.diff({ from: 'HEAD', to: 'HEAD' }), '');
    assert.match(await git.diff({ from: 'HEAD~1', to: 'HEAD', paths: ['README.md'] }), /README.md/);
    assert.deepEqual(await git.diffStat(), {
      files: [{ path: 'README.md', insertions: 1, deletions: 1 }],
      files_changed: 1,
      insertions: 1,
      deletions: 1,
    });
  });

  test('stashes: push, list, show, apply, drop, pop; index 0 is the latest', async () => {
    assert.deepEqual(await git.stashPush(), { created: false, entry: null });
    await writeFile(join(repo.root, 'README.md'), 'stash one\n');
    await git.stashPush({ message: 'one' });
    await writeFile(join(repo.root, 'README.md'), 'stash two\n');
    await writeFile(join(repo.root, 'new.txt'), 'untracked\n');
    const pushed = await git.stashPush({ message: 'two', includeUntracked: true });
    assert.equal(pushed.entry?.message, 'On main: two');
    assert.ok(!existsSync(join(repo.root, 'new.txt')));
    assert.deepEqual(
      (await git.stashList()).map((s) => [s.index, s.ref, s.message]),
      [
        [0, 'stash@{0}', 'On main: two'],
        [1, 'stash@{1}', 'On main: one'],
      ],
    );
    assert.match(await git.stashShow({ index: 1 }), /\+stash one/);
    await git.stashPop();
    assert.equal(await readFile(join(repo.root, 'README.md'), 'utf8'), 'stash two\n', 'pop takes the latest by default');
    assert.ok(existsSync(join(repo.root, 'new.txt')));
    repo.git('checkout', '--', 'README.md');
    repo.git('clean', '-fdq');
    await git.stashApply();
    assert.equal(await readFile(join(repo.root, 'README.md'), 'utf8'), 'stash one\n');
    repo.git('checkout', '--', 'README.md');
    await git.stashDrop();
    assert.deepEqual(await git.stashList(), []);
    await assert.rejects(git.stashPop({ index: -1 }), code('invalid_argument'));
  });

  test('worktrees: add for a work package with the documented defaults, list with metadata, remove, prune', async () => {
    const tree = await git.addWorktree({ featureSlug: '001-login', wpSequence: 3 });
    assert.deepEqual(tree, {
      path: join(repo.root, '.worktrees', '001-login-wp03'),
      branch: '001-login/wp03',
      feature_slug: '001-login',
      wp_id: 3,
    });
    assert.ok(existsSync(join(tree.path, 'README.md')));
    assert.match(await readFile(join(repo.root, '.git', 'info', 'exclude'), 'utf8'), /^\/\.worktrees\/$/m);
    assert.equal(repo.git('status', '--porcelain'), '', 'the worktree directory is excluded from status');
    const plain = await git.addWorktree({ branch: 'spike', path: '.worktrees/spike' });
    assert.deepEqual([plain.branch, plain.feature_slug, plain.wp_id], ['spike', null, null]);
    const list = await git.listWorktrees();
    assert.deepEqual(
      list.map((w) => [w.branch, w.feature_slug, w.wp_id]),
      [
        ['main', null, null],
        ['001-login/wp03', '001-login', 3],
        ['spike', null, null],
      ],
    );
    assert.deepEqual(await git.removeWorktree('.worktrees/spike'), { path: join(repo.root, '.worktrees', 'spike'), removed: true });
    await assert.rejects(git.removeWorktree('.worktrees/spike'), code('not_found'));
    await import('node:fs/promises').then((fs) => fs.rm(tree.path, { recursive: true, force: true }));
    assert.equal((await git.pruneWorktrees()).length, 1);
  });

  test('a work package worktree left initializing by a killed add is discarded and added again', async () => {
    // What a SIGKILL during `git worktree add` leaves, made by hand: git's own "initializing" lock on a
    // worktree that is half checked out (on its branch), or not yet on any branch (detached).
    const onBranch = await git.addWorktree({ featureSlug: '003-crash', wpSequence: 1 });
    repo.git('worktree', 'lock', '--reason', 'initializing', onBranch.path);
    await import('node:fs/promises').then((fs) => fs.rm(join(onBranch.path, 'README.md')));
    const detached = join(repo.root, '.worktrees', '003-crash-wp02');
    repo.git('worktree', 'add', '--detach', detached, 'main');
    repo.git('worktree', 'lock', '--reason', 'initializing', detached);
    assert.deepEqual(
      (await git.listWorktrees()).filter((w) => w.locked !== undefined).map((w) => [w.branch, w.locked]),
      [
        ['003-crash/wp01', 'initializing'],
        [null, 'initializing'],
      ],
    );

    for (const [wpSequence, path] of [
      [1, onBranch.path],
      [2, detached],
    ] as const) {
      const tree = await git.workPackageWorktree({ featureSlug: '003-crash', wpSequence });
      assert.equal(tree.path, path);
      assert.equal(tree.branch, `003-crash/wp0${wpSequence}`);
      assert.equal(tree.locked, undefined);
      assert.ok(existsSync(join(path, 'README.md')), 'checked out in full');
    }
    // A worktree on its branch that finished is reused as it is, local changes and all.
    await writeFile(join(onBranch.path, 'work.txt'), 'in progress\n');
    assert.equal((await git.workPackageWorktree({ featureSlug: '003-crash', wpSequence: 1 })).path, onBranch.path);
    assert.ok(existsSync(join(onBranch.path, 'work.txt')));
    for (const path of [onBranch.path, detached]) await git.removeWorktree(path, { force: true });
  });

  test('injection attempts are refused before git runs', async () => {
    await assert.rejects(git.createBranch('--upload-pack=touch /tmp/pwned'), code('unsafe_argument'));
    await assert.rejects(git.createBranch('ok', { base: '--output=/tmp/x' }), code('unsafe_argument'));
    await assert.rejects(git.checkoutBranch('-b'), code('unsafe_argument'));
    await assert.rejects(git.deleteBranch('--force'), code('unsafe_argument'));
    await assert.rejects(git.createBranch('a..b'), code('unsafe_argument'));
    await assert.rejects(git.createBranch('with space'), code('unsafe_argument'));
    await assert.rejects(git.createBranch('line\nbreak'), code('unsafe_argument'));
    await assert.rejects(git.diff({ from: '--output=/tmp/pwned' }), code('unsafe_argument'));
    await assert.rejects(git.diff({ to: 'HEAD;rm -rf /' }), code('unsafe_argument'));
    await assert.rejects(git.diff({ from: 'main..HEAD' }), code('unsafe_argument'));
    await assert.rejects(git.fixup('--exec=sh'), code('unsafe_argument'));
    await assert.rejects(git.rebase({ onto: '--exec=touch pwned' }), code('unsafe_argument'));
    await assert.rejects(git.log({ rev: '--all' }), code('unsafe_argument'));
    await assert.rejects(git.addWorktree({ branch: '-x', path: 'w' }), code('unsafe_argument'));
    await assert.rejects(git.removeWorktree('--force'), code('unsafe_argument'));
    assert.ok(!existsSync('/tmp/pwned'));
  });

  test('paths that leave the repository are refused', async () => {
    await assert.rejects(git.addWorktree({ branch: 'escape', path: '../outside' }), code('path_escape'));
    await assert.rejects(git.addWorktree({ branch: 'escape', path: '/tmp/outside' }), code('path_escape'));
    await assert.rejects(git.diff({ paths: ['../../etc/passwd'] }), code('path_escape'));
    await assert.rejects(git.commit('x', { paths: ['/etc/passwd'] }), code('path_escape'));
    await symlink('/tmp', join(repo.root, 'link-out'));
    await assert.rejects(git.addWorktree({ branch: 'escape', path: 'link-out/tree' }), code('path_escape'));
    await assert.rejects(git.addWorktree({ featureSlug: '../x', wpSequence: 1 }), code('invalid_argument'));
  });
});
