/**
 * Temporary git repositories for tests: `main` with two commits, an
 * identity configured, nothing global touched.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function tempRepo(
  prefix = 'workflow-git-',
): Promise<{ root: string; git: (...args: string[]) => string; cleanup: () => Promise<void> }> {
  const root = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: root } });
  git('init', '--quiet', '--initial-branch=main');
  git('config', 'user.name', 'Test User');
  git('config', 'user.email', 'test@example.invalid');
  git('config', 'commit.gpgsign', 'false');
  await writeFile(join(root, 'README.md'), '# demo\n\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\n');
  git('add', '-A');
  git('commit', '--quiet', '-m', 'initial');
  await writeFile(join(root, 'README.md'), '# demo\n\nline 1\nline 2\nline 3\nline 4 changed\nline 5\nline 6\nline 7\n');
  git('commit', '--quiet', '-am', 'second');
  return { root, git, cleanup: () => rm(root, { recursive: true, force: true }) };
}
