/**
 * @module gitRepo
 * Temporary git repositories for tests: a branch `main`, an identity
 * configured, nothing global read or touched (no system config, HOME is the
 * repository), removed by `cleanup()`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const COMMIT_SUBJECTS = ['initial', 'second', 'third'];

/** A temporary repository and a `git` runner inside it. */
export interface TempGitRepo {
  root: string;
  /** Runs git in the repository (argument array, no shell) and returns its stdout. */
  git: (...args: string[]) => string;
  cleanup: () => Promise<void>;
}

/**
 * Creates a repository whose history is one commit per entry of
 * `readmeVersions`, each writing `README.md` with that text; the commits'
 * subjects are `initial`, `second`, `third`, then `commit N`.
 *
 * @example
 * ```ts
 * const repo = await tempGitRepo({ prefix: 'my-test-', readmeVersions: ['# a\n', '# b\n'] });
 * repo.git('log', '--oneline');
 * await repo.cleanup();
 * ```
 */
export async function tempGitRepo(options: { prefix?: string; readmeVersions?: readonly string[] } = {}): Promise<TempGitRepo> {
  const root = await realpath(await mkdtemp(join(tmpdir(), options.prefix ?? 'git-')));
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: root } });
  git('init', '--quiet', '--initial-branch=main');
  git('config', 'user.name', 'Test User');
  git('config', 'user.email', 'test@example.invalid');
  git('config', 'commit.gpgsign', 'false');
  const versions = options.readmeVersions ?? ['# demo\n'];
  for (const [index, text] of versions.entries()) {
    await writeFile(join(root, 'README.md'), text);
    git('add', '-A');
    git('commit', '--quiet', '-m', COMMIT_SUBJECTS[index] ?? `commit ${index + 1}`);
  }
  return { root, git, cleanup: () => rm(root, { recursive: true, force: true }) };
}
