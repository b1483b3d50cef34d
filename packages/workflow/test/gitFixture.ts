/**
 * Temporary git repositories for the workflow's tests: `main` with two
 * commits (the second changes line 4 of README.md), from test-support.
 */
import { type TempGitRepo, tempGitRepo } from '@switchyard/test-support';

export function tempRepo(prefix = 'workflow-git-'): Promise<TempGitRepo> {
  return tempGitRepo({
    prefix,
    readmeVersions: [
      '# demo\n\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\n',
      '# demo\n\nline 1\nline 2\nline 3\nline 4 changed\nline 5\nline 6\nline 7\n',
    ],
  });
}
