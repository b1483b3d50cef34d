/**
 * @module localCi
 * The local CI command as a CI status: the repository's checks run in a
 * work package's worktree, summed up the way a code host reports CI (one
 * state, one entry per check), so the review loop and the reviewers treat
 * both alike. This is what makes the `wp-ci-before-review` gate passable
 * without a code host.
 */
import type { CiStatus } from '../agents/reviewers.js';
import type { CheckRun, CheckRunner } from './checkRunner.js';

/** What a check run is recorded as in `ci_output` evidence (the output tail stays out of the chain). */
export type RecordedCheckRun = Omit<CheckRun, 'output_tail'>;

/**
 * Runs the checks in `cwd` and sums them up: `success` when every one passed, else `failure`.
 *
 * @example
 * ```ts
 * const { status, runs } = await localCiStatus(runner, '/repo/.worktrees/login-wp01');
 * ```
 */
export async function localCiStatus(
  runner: CheckRunner,
  cwd: string,
  options: { signal?: AbortSignal; progress?: (data: Record<string, unknown>) => void } = {},
): Promise<{ status: CiStatus; runs: RecordedCheckRun[] }> {
  const runs = await runner.runAll(cwd, {
    ...(options.signal ? { signal: options.signal } : {}),
    onStart: (check) => options.progress?.({ check: check.name, state: 'running' }),
    onEnd: (run) =>
      options.progress?.({
        check: run.name,
        state: run.passed ? 'passed' : 'failed',
        exit_code: run.exit_code,
        duration_ms: run.duration_ms,
      }),
  });
  const status: CiStatus = {
    state: runs.every((r) => r.passed) ? 'success' : 'failure',
    url: null,
    checks: runs.map((r) => ({ context: r.name, state: r.passed ? 'success' : 'failure' })),
  };
  return { status, runs: runs.map(({ output_tail: _tail, ...rest }) => rest) };
}
