/**
 * @module reviewLoop
 * One agent job on one work package: run the agent in the package's
 * worktree, attach CI evidence, move it to REVIEW, have the reviewer judge
 * the diff, and either approve (REVIEW -> DONE) or feed the comments back
 * for another cycle (REVIEW -> DOING). After the last cycle without
 * approval the package is BLOCKED. Every move is an audited transition.
 * A code host runs CI only on commits it has, so with one (and a remote)
 * the package's branch is pushed before its CI is read.
 */
import type { CheckRunner } from '../ci/checkRunner.js';
import { localCiStatus } from '../ci/localCi.js';
import type { AgentJob, AgentResult } from '../domain/records.js';
import { GateFailedError, WorkflowError } from '../errors.js';
import type { AgentEvent } from '../events.js';
import { type GitRepository, workPackageBranch } from '../git/gitRepository.js';
import { abortableSleep } from '../util/abortableSleep.js';
import type { Workflow } from '../workflow.js';
import { type AgentAdapter, type AgentConfig, type AgentRunHooks, headOf } from './agentAdapter.js';
import type { CiStatus, CiStatusSource, Reviewer } from './reviewers.js';

/** How a job ended. */
export type JobOutcome = 'approved' | 'review_exhausted' | 'agent_failed';

/** Collaborators of the loop. */
export interface ReviewLoopDeps {
  workflow: Workflow;
  git: GitRepository;
  reviewer: Reviewer;
  ciSource?: CiStatusSource;
  /**
   * The remote the package's branch is pushed to before `ciSource` is read for its head: the
   * host runs and reports CI only for commits it has, and the worktree's commits are local until
   * then. Resolved once per job, before anything moves: a function that finds no remote fails the
   * job at once with what to do (the host could never see the package's commits, so its CI read
   * would only end in a 404 after the agent ran). No function pushes nothing (the agent pushes).
   */
  ciRemote?: () => Promise<string | undefined>;
  /**
   * The repository's own checks, run in the package's worktree after each agent run when there is
   * no `ciSource` (no code host): their result is the package's `ci_output` evidence.
   */
  localChecks?: CheckRunner;
  /** Waits between CI polls; injected so tests do not sleep. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** CI polls while the state is pending (default 10, every 5 s). */
  ciPollAttempts?: number;
  ciPollIntervalMs?: number;
}

export interface LoopReport {
  outcome: JobOutcome;
  cycles: number;
  result: AgentResult | null;
}

/** Runs the agent-and-review cycles for a job. */
export class ReviewLoop {
  constructor(private readonly deps: ReviewLoopDeps) {}

  async run(
    job: AgentJob,
    adapter: AgentAdapter,
    config: AgentConfig,
    signal: AbortSignal,
    emit: (kind: AgentEvent['kind'], data: Record<string, unknown>) => void,
    onProcessStarted?: AgentRunHooks['onProcessStarted'],
  ): Promise<LoopReport> {
    const { workflow } = this.deps;
    const slug = job.feature_slug;
    const seq = job.wp_sequence;
    const agentActor = `agent:${adapter.kind}`;
    const move = async (to: string, actor: string) => {
      const r = await workflow.transitionWorkPackage(slug, seq, { to, actor });
      emit('transition', { from: r.from, to: r.to, actor, entry_id: r.entry.id });
    };
    const feature = await workflow.getFeature(slug);
    const pushForCi = await this.ciPushTarget(slug, seq);
    let wp = await workflow.getWorkPackage(slug, seq);
    if (wp.state === 'PLANNED' || wp.state === 'BLOCKED') await move('DOING', agentActor);
    else if (wp.state !== 'DOING')
      throw new WorkflowError(
        'invalid_transition',
        `work package ${seq} is ${wp.state}; an agent starts on PLANNED, BLOCKED or DOING work`,
      );
    const worktree = await this.worktreeFor(slug, seq, feature.target_branch);
    const base = (
      await this.deps.git.run(['merge-base', feature.target_branch, 'HEAD'], { cwd: worktree }).catch(() => headOf(worktree))
    ).trim();
    wp = await workflow.updateWorkPackage(slug, seq, { agent_id: job.id, actor: agentActor });
    let feedback: string[] = [];
    let last: AgentResult | null = null;
    for (let cycle = 1; cycle <= config.review_cycles; cycle++) {
      signal.throwIfAborted();
      emit('cycle', { cycle, of: config.review_cycles });
      const context = [
        feature.description,
        feedback.length ? `Reviewer feedback from cycle ${cycle - 1}:\n${feedback.map((c) => `- ${c}`).join('\n')}` : '',
      ]
        .filter(Boolean)
        .join('\n\n');
      const prompt = `Work package ${seq} of feature ${slug}: ${wp.title}${wp.file_scope.length ? `\nFiles in scope: ${wp.file_scope.join(', ')}` : ''}\nCommit your changes in this worktree.`;
      last = await adapter.run({ feature_slug: slug, work_package: wp, context, prompt, worktree, attempt: cycle }, config, {
        signal,
        onOutput: (chunk) => emit('output', { cycle, chunk }),
        ...(onProcessStarted ? { onProcessStarted } : {}),
      });
      signal.throwIfAborted();
      if (last.pr_url) wp = await workflow.updateWorkPackage(slug, seq, { pr_url: last.pr_url, actor: agentActor });
      if (last.exit_code !== 0) {
        await move('BLOCKED', agentActor);
        return { outcome: 'agent_failed', cycles: cycle, result: last };
      }
      const head = await headOf(worktree);
      const ci = await this.ciFor(head, worktree, signal, (data) => emit('ci', { cycle, ...data }), pushForCi);
      if (ci && ci.status.state !== 'none') {
        await workflow.records.attachEvidence(slug, {
          wp_sequence: seq,
          type: 'ci_output',
          reference: ci.status.url ?? `${ci.local ? 'local-ci' : 'ci'}:${head}`,
          summary: `${ci.local ? 'local CI' : 'CI'} ${ci.status.state} for ${head.slice(0, 12)}`,
          passed: ci.status.state === 'success',
          data: {
            state: ci.status.state,
            commit: head,
            checks: ci.status.checks,
            ...(ci.local ? { runs: ci.local } : {}),
            ...(ci.pushed ? { pushed: ci.pushed } : {}),
          },
          actor: ci.local ? 'ci:local' : 'ci',
        });
      }
      try {
        await move('REVIEW', agentActor);
      } catch (error) {
        if (!(error instanceof GateFailedError)) throw error;
        feedback = error.violations.map((v) => `${v.message}. ${v.remediation}`);
        emit('review', { cycle, approved: false, reviewer: 'governance', summary: error.message, comments: feedback });
        continue;
      }
      const stat = await this.deps.git.diffStat({ from: base, to: head, cwd: worktree });
      const diff = await this.deps.git.diff({ from: base, to: head, cwd: worktree });
      const lint = (await workflow.records.listEvidence(slug, seq)).filter((e) => e.type === 'lint_result').at(-1);
      const verdict = await this.deps.reviewer.review(
        {
          featureSlug: slug,
          wpSequence: seq,
          title: wp.title,
          diff,
          stat,
          ci: ci?.status ?? null,
          lintPassed: lint ? lint.passed : null,
          cycle,
        },
        { signal },
      );
      emit('review', { cycle, ...verdict });
      const reviewerActor = `reviewer:${verdict.reviewer}`;
      if (verdict.approved) {
        await workflow.records.attachEvidence(slug, {
          wp_sequence: seq,
          type: 'review_approval',
          reference: `review:${job.id}:${cycle}`,
          summary: verdict.summary,
          passed: true,
          data: { commit: head, reviewer: verdict.reviewer },
          actor: reviewerActor,
        });
        await move('DONE', reviewerActor);
        return { outcome: 'approved', cycles: cycle, result: last };
      }
      feedback = verdict.comments.length ? verdict.comments : [verdict.summary];
      await move('DOING', reviewerActor);
    }
    await move('BLOCKED', 'workflow:review-loop');
    return { outcome: 'review_exhausted', cycles: config.review_cycles, result: last };
  }

  /** Where the package's branch is pushed for the code host's CI (undefined: nothing is pushed). */
  private async ciPushTarget(slug: string, seq: number): Promise<{ remote: string; branch: string } | undefined> {
    if (!this.deps.ciSource || !this.deps.ciRemote) return undefined;
    const remote = await this.deps.ciRemote();
    const branch = workPackageBranch(slug, seq);
    if (!remote)
      throw new WorkflowError(
        'invalid_argument',
        `the code host runs CI only on commits pushed to it, and this repository has no remote to push ${branch} to: add one (git remote add origin <url of the code host's repository>), or name the remote to use, then retry`,
        { details: { field: 'remote', branch } },
      );
    return { remote, branch };
  }

  /**
   * The code host's CI for `head` when there is one (`head` pushed to `push.branch` on `push.remote`
   * first, when a remote is given); otherwise the local checks run in the worktree.
   */
  private async ciFor(
    head: string,
    worktree: string,
    signal: AbortSignal,
    progress: (data: Record<string, unknown>) => void,
    push: { remote: string; branch: string } | undefined,
  ): Promise<{
    status: CiStatus;
    local?: Awaited<ReturnType<typeof localCiStatus>>['runs'];
    pushed?: { remote: string; branch: string };
  } | null> {
    if (this.deps.ciSource) {
      if (push) {
        await this.pushForCi(head, push);
        progress({ state: 'pushed', remote: push.remote, branch: push.branch, commit: head });
      }
      const status = await this.pollCi(this.deps.ciSource, head, signal);
      return { status, ...(push ? { pushed: push } : {}) };
    }
    if (!this.deps.localChecks || this.deps.localChecks.checks.length === 0) return null;
    const { status, runs } = await localCiStatus(this.deps.localChecks, worktree, { signal, progress });
    return { status, local: runs };
  }

  /**
   * Pushes `head` to the package's branch on the remote. A plain push: an agent that rewrote
   * commits the remote already has is refused by git rather than overwritten, and the job fails
   * saying so.
   */
  private async pushForCi(head: string, { remote, branch }: { remote: string; branch: string }): Promise<void> {
    try {
      await this.deps.git.run(['push', '--quiet', '--end-of-options', remote, `${head}:refs/heads/${branch}`]);
    } catch (error) {
      throw new WorkflowError(
        'upstream_failed',
        `pushing ${branch} (${head.slice(0, 12)}) to ${remote}, for the code host to run its CI, failed: ${(error as Error).message}`,
        { cause: error, details: { remote, branch, commit: head } },
      );
    }
  }

  private async pollCi(source: CiStatusSource, ref: string, signal: AbortSignal): Promise<CiStatus> {
    const attempts = this.deps.ciPollAttempts ?? 10;
    let status = await source.ciStatus(ref, { signal });
    for (let i = 1; i < attempts && status.state === 'pending'; i++) {
      await (this.deps.sleep ?? abortableSleep)(this.deps.ciPollIntervalMs ?? 5000, signal);
      status = await source.ciStatus(ref, { signal });
    }
    return status;
  }

  /** The package's worktree: the existing one on its branch, or a new one from the feature's target branch. */
  private async worktreeFor(slug: string, seq: number, base: string): Promise<string> {
    return (await this.deps.git.workPackageWorktree({ featureSlug: slug, wpSequence: seq, base })).path;
  }
}
