/**
 * @module ship
 * `ship`: checks the ship gates first, then merges the work-package
 * branches and the feature branch into the target branch, in a detached
 * worktree, and moves the target branch only when every merge succeeded (a
 * conflict leaves the repository exactly as it was: clean, on its branch).
 * With a remote, the target branch is pushed. With a code host, the feature
 * branch is pushed instead, a pull request opened, and merged by the host
 * once its checks pass. With a tracker, the feature's item is closed.
 */
import type { CiStatus } from '../agents/reviewers.js';
import { planFeatureMove, transitionString } from '../domain/stateMachine.js';
import { GateFailedError, WorkflowError } from '../errors.js';
import { GIT_DEFAULTS, type GitRepository } from '../git/gitRepository.js';
import type { CodeHostAdapter } from '../sync/adapters.js';
import type { SyncEngine, SyncResult } from '../sync/syncEngine.js';
import { abortableSleep } from '../util/abortableSleep.js';
import type { FeatureTransitionResult, Workflow } from '../workflow.js';
import { branchExists, featureBranch, inWorktree, mergeBranches, revParse, workPackageBranches } from './integration.js';

/** Options of {@link shipFeature}. */
export interface ShipOptions {
  workflow: Workflow;
  git: GitRepository;
  actor: string;
  /** The remote to push to; none means a local merge only. */
  remote?: string;
  /** Opens and merges the pull request; needs `remote` (the branch must be on the host). */
  codeHost?: CodeHostAdapter;
  /** Closes the feature's tracker item (when it has one). */
  sync?: SyncEngine;
  /** Waits between CI polls of the pull request (injected so tests do not sleep). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  ciPollAttempts?: number;
  ciPollIntervalMs?: number;
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
}

/** What `ship` did. */
export interface ShipReport {
  target_branch: string;
  merged: string[];
  commit: string;
  pushed: { remote: string; ref: string } | null;
  pull_request: { number: number; url: string; ci: CiStatus['state'] } | null;
  tracker: SyncResult | null;
  transition: FeatureTransitionResult;
}

/**
 * Ships a VALIDATED feature.
 *
 * @example
 * ```ts
 * const report = await shipFeature('login', { workflow, git, actor: 'alice', remote: 'origin' });
 * ```
 */
export async function shipFeature(slug: string, options: ShipOptions): Promise<ShipReport> {
  const { workflow, git } = options;
  const say = options.onProgress ?? (() => undefined);
  const feature = await workflow.getFeature(slug);
  planFeatureMove(feature.state, 'SHIPPED', false);
  // The gates first: a refused ship merges nothing.
  const gate = await workflow.checkGovernance(slug, { to: 'SHIPPED' });
  if (!gate.passed) throw new GateFailedError(transitionString(feature.state, 'SHIPPED'), gate.violations);
  const target = feature.target_branch;
  const packages = await workflow.listWorkPackages(slug);
  const feat = featureBranch(slug);
  // The feature branch first: it already holds every package validate saw, so theirs merge as no-ops.
  const branches = [
    ...((await branchExists(git, feat)) ? [feat] : []),
    ...(await workPackageBranches(
      git,
      slug,
      packages.map((w) => w.sequence),
    )),
  ];
  if (branches.length === 0)
    throw new WorkflowError('invalid_transition', `${slug} has no branches to ship: run implement (and validate) first`, {
      details: { field: 'feature_slug' },
    });
  if (options.codeHost && !options.remote)
    throw new WorkflowError('invalid_argument', 'shipping through a code host needs a remote to push the feature branch to', {
      details: { field: 'remote' },
    });

  let pushed: ShipReport['pushed'] = null;
  let pullRequest: ShipReport['pull_request'] = null;
  let commit: string;
  if (options.codeHost && options.remote) {
    ({ commit, pullRequest } = await shipThroughCodeHost(slug, options, { target, branches, feat }));
    pushed = { remote: options.remote, ref: feat };
  } else {
    commit = await mergeIntoTarget(git, slug, target, branches);
    say(`merged ${branches.join(', ')} into ${target} (${commit.slice(0, 12)})`);
    if (options.remote) {
      await git.run(['push', '--end-of-options', options.remote, `refs/heads/${target}:refs/heads/${target}`]);
      pushed = { remote: options.remote, ref: target };
      say(`pushed ${target} to ${options.remote}`);
    }
  }
  const transition = await workflow.advance(slug, 'ship', { actor: options.actor });
  let tracker: SyncResult | null = null;
  if (options.sync && (await workflow.store.reader.getSyncLink('tracker', `feature:${slug}`))) {
    // The item's state follows the feature's (SHIPPED maps to the tracker's done state).
    tracker = await options.sync.push(slug, 'tracker');
    say(`tracker item ${tracker.remote_id}: ${tracker.status}`);
  }
  return { target_branch: target, merged: branches, commit, pushed, pull_request: pullRequest, tracker, transition };
}

/**
 * Merges `branches` into `target` in a detached worktree, then moves `target` to the result: a fast-forward of the
 * user's checkout when it is on `target`, a compare-and-swap of the ref otherwise.
 */
async function mergeIntoTarget(git: GitRepository, slug: string, target: string, branches: string[]): Promise<string> {
  const before = await revParse(git, target);
  const merged = await inWorktree(git, { path: `${GIT_DEFAULTS.worktreeDir}/${slug}-ship`, base: target }, async (cwd) => {
    await mergeBranches(git, cwd, branches, target);
    return revParse(git, 'HEAD', cwd);
  });
  if (merged === before) return merged;
  const current = await git.currentBranch();
  if (current === target) await git.run(['merge', '--ff-only', '--end-of-options', merged]);
  else await git.run(['update-ref', '-m', `yard ship ${slug}`, `refs/heads/${target}`, merged, before]);
  return merged;
}

async function shipThroughCodeHost(
  slug: string,
  options: ShipOptions,
  refs: { target: string; branches: string[]; feat: string },
): Promise<{ commit: string; pullRequest: NonNullable<ShipReport['pull_request']> }> {
  const { git, workflow } = options;
  const host = options.codeHost!;
  const remote = options.remote!;
  const say = options.onProgress ?? (() => undefined);
  if (!host.mergePullRequest)
    throw new WorkflowError('not_implemented', 'the configured code host cannot merge pull requests; ship without it or merge by hand');
  // The feature branch carries every package (validate merged them); bring in any package committed since.
  const head = await inWorktree(
    git,
    { path: `${GIT_DEFAULTS.worktreeDir}/${slug}-feature`, base: refs.target, branch: refs.feat },
    async (cwd) => {
      await mergeBranches(
        git,
        cwd,
        refs.branches.filter((b) => b !== refs.feat),
        refs.feat,
      );
      return revParse(git, 'HEAD', cwd);
    },
  );
  await git.run(['push', '--end-of-options', remote, `refs/heads/${refs.feat}:refs/heads/${refs.feat}`]);
  say(`pushed ${refs.feat} to ${remote}`);
  const feature = await workflow.getFeature(slug);
  const pr = await host.createPullRequest({ title: feature.title, head: refs.feat, base: refs.target, body: feature.description });
  say(`opened pull request #${pr.number}: ${pr.url}`);
  const signal = options.signal ?? new AbortController().signal;
  let ci = await host.ciStatus(head, { signal });
  for (let i = 1; i < (options.ciPollAttempts ?? 60) && (ci.state === 'pending' || ci.state === 'none'); i++) {
    await (options.sleep ?? abortableSleep)(options.ciPollIntervalMs ?? 10_000, signal);
    ci = await host.ciStatus(head, { signal });
  }
  if (ci.state !== 'success')
    throw new WorkflowError(
      'gate_failed',
      `pull request #${pr.number}: checks ${ci.state}${ci.checks.length ? ` (${ci.checks.map((c) => `${c.context}: ${c.state}`).join(', ')})` : ''}; not merged`,
      { details: { pull_request: pr, ci } },
    );
  // Pinned to the head that passed: a push since then makes the host refuse rather than merge unchecked code.
  const merged = await host.mergePullRequest(pr.number, { sha: head });
  if (!merged.merged)
    throw new WorkflowError('conflict', `the code host did not merge pull request #${pr.number}`, { details: { pull_request: pr } });
  say(`merged pull request #${pr.number} (${merged.sha.slice(0, 12)})`);
  await git.run(['fetch', '--end-of-options', remote, `refs/heads/${refs.target}`]);
  const fetched = await revParse(git, 'FETCH_HEAD');
  const before = await revParse(git, refs.target);
  const fastForward = await git
    .run(['merge-base', '--is-ancestor', before, fetched])
    .then(() => true)
    .catch(() => false);
  if (!fastForward) say(`local ${refs.target} has commits ${remote}/${refs.target} lacks; left as it is`);
  else if ((await git.currentBranch()) === refs.target) await git.run(['merge', '--ff-only', '--end-of-options', fetched]);
  else await git.run(['update-ref', '-m', `yard ship ${slug}`, `refs/heads/${refs.target}`, fetched, before]);
  return { commit: fetched, pullRequest: { ...pr, ci: ci.state } };
}
