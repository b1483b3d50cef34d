/**
 * @module ciStatus
 * One CI verdict from GitHub's two CI APIs: check runs (the Checks API,
 * where GitHub Actions reports) and commit statuses (the older API other
 * CI services still use). A repository may use either or both; reading
 * only one makes the other's red invisible, so both are folded together
 * and any failure on either side makes the whole verdict red.
 */
import type { CiStatus } from '../../agents/reviewers.js';

/** The fields of a check run the verdict reads (a subset of GitHub's `check-run`). */
export interface CheckRunLike {
  name: string;
  status: string;
  conclusion: string | null;
  html_url: string | null;
  details_url?: string | null;
}

/** The fields of a commit status the verdict reads (a subset of GitHub's `simple-commit-status`). */
export interface CommitStatusLike {
  context: string;
  state: string;
  target_url: string | null;
}

// Conclusions that do not hold a change back (GitHub shows them grey or green).
const PASSING_CONCLUSIONS = new Set(['success', 'neutral', 'skipped']);

/** A check run's state in the commit-status vocabulary. */
function checkRunState(run: CheckRunLike): CiStatus['state'] {
  if (run.status !== 'completed') return 'pending';
  if (run.conclusion === null) return 'pending';
  return PASSING_CONCLUSIONS.has(run.conclusion) ? 'success' : 'failure';
}

function statusState(status: CommitStatusLike): CiStatus['state'] {
  return status.state === 'success' || status.state === 'pending' || status.state === 'failure' || status.state === 'error'
    ? status.state
    : 'error';
}

/**
 * Folds check runs and commit statuses: `failure` when any is red (`error`
 * when the only red is a status in error), else `pending` while any runs,
 * else `success`, and `none` when the commit has neither.
 *
 * @example
 * ```ts
 * combineCi([{ name: 'test', status: 'completed', conclusion: 'failure', html_url: null }], []).state; // 'failure'
 * ```
 */
export function combineCi(runs: readonly CheckRunLike[], statuses: readonly CommitStatusLike[]): CiStatus {
  const entries = [
    ...runs.map((run) => ({ context: run.name, state: checkRunState(run), url: run.html_url ?? run.details_url ?? null })),
    ...statuses.map((status) => ({ context: status.context, state: statusState(status), url: status.target_url })),
  ];
  if (entries.length === 0) return { state: 'none', url: null, checks: [] };
  const has = (state: CiStatus['state']) => entries.some((entry) => entry.state === state);
  const state: CiStatus['state'] = has('failure') ? 'failure' : has('error') ? 'error' : has('pending') ? 'pending' : 'success';
  // Point at what needs attention: the first red entry, else the first with a link.
  const focus = entries.find((entry) => entry.state === state && entry.url) ?? entries.find((entry) => entry.url);
  return { state, url: focus?.url ?? null, checks: entries.map(({ context, state: s }) => ({ context, state: s })) };
}
