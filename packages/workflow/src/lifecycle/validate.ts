/**
 * @module validate
 * `validate`: brings the work-package branches together on the feature
 * branch, runs the repository's checks there (in a worktree of its own, so
 * the user's checkout is never touched), records each run as evidence on
 * the feature (exit code, duration, output hash), and moves the feature to
 * VALIDATED, where the gates read that evidence. A failing check leaves the
 * feature where it was.
 */
import { CHECK_EVIDENCE_TYPE, type CheckRun, type CheckRunner } from '../ci/checkRunner.js';
import type { Evidence } from '../domain/model.js';
import { planFeatureMove, transitionString } from '../domain/stateMachine.js';
import { GateFailedError, WorkflowError } from '../errors.js';
import { GIT_DEFAULTS, type GitRepository } from '../git/gitRepository.js';
import type { FeatureTransitionResult, Workflow } from '../workflow.js';
import { featureBranch, inWorktree, mergeBranches, revParse, workPackageBranches } from './integration.js';

/** What `validate` did. */
export interface ValidationReport {
  branch: string;
  commit: string;
  runs: (Omit<CheckRun, 'output_tail'> & { evidence_id: number })[];
  transition: FeatureTransitionResult;
}

/** Options of {@link validateFeature}. */
export interface ValidateOptions {
  workflow: Workflow;
  git: GitRepository;
  /** The configured checks; validation without any is refused (nothing would be validated). */
  checks: CheckRunner | undefined;
  actor: string;
  /** Progress while checks run. */
  onCheck?: (event: { check: string; state: 'running' | 'passed' | 'failed'; exit_code?: number; duration_ms?: number }) => void;
  signal?: AbortSignal;
}

/**
 * Validates a feature in IMPLEMENTING.
 *
 * @example
 * ```ts
 * const report = await validateFeature('login', { workflow, git, checks: new CheckRunner({ checks }), actor: 'alice' });
 * ```
 */
export async function validateFeature(slug: string, options: ValidateOptions): Promise<ValidationReport> {
  const { workflow, git, checks } = options;
  const feature = await workflow.getFeature(slug);
  // Refuse a feature that cannot move before anything runs, with the state machine's own message.
  planFeatureMove(feature.state, 'VALIDATED', false);
  // Refusals no check run can lift (open work packages, evidence of kinds no check records) come first.
  const produced = new Set<string>((checks?.checks ?? []).map((c) => CHECK_EVIDENCE_TYPE[c.kind]));
  const rules = new Map((await workflow.store.reader.listRules()).map((r) => [r.rule_id, r]));
  const gate = await workflow.checkGovernance(slug, { to: 'VALIDATED' });
  const blocking = gate.violations.filter((v) => !(rules.get(v.rule_id)?.required_evidence.some((t) => produced.has(t)) ?? false));
  if (blocking.length > 0) throw new GateFailedError(transitionString(feature.state, 'VALIDATED'), blocking);
  if (!checks || checks.checks.length === 0)
    throw new WorkflowError(
      'invalid_argument',
      'no checks to validate with: set ci.checks in .agileplus/config.yaml (yard init detects them)',
      { details: { field: 'ci.checks' } },
    );
  const branch = featureBranch(slug);
  const packages = await workflow.listWorkPackages(slug);
  const wpBranches = await workPackageBranches(
    git,
    slug,
    packages.map((w) => w.sequence),
  );
  const path = `${GIT_DEFAULTS.worktreeDir}/${slug}-feature`;
  const { commit, runs } = await inWorktree(git, { path, branch, base: feature.target_branch }, async (cwd) => {
    // The target may have moved since the branch was made: bring it in first, then each package.
    await mergeBranches(git, cwd, [feature.target_branch, ...wpBranches], branch);
    const head = await revParse(git, 'HEAD', cwd);
    const results = await checks.runAll(cwd, {
      ...(options.signal ? { signal: options.signal } : {}),
      onStart: (c) => options.onCheck?.({ check: c.name, state: 'running' }),
      onEnd: (r) =>
        options.onCheck?.({ check: r.name, state: r.passed ? 'passed' : 'failed', exit_code: r.exit_code, duration_ms: r.duration_ms }),
    });
    return { commit: head, runs: results };
  });
  const recorded: ValidationReport['runs'] = [];
  for (const run of runs) {
    const { output_tail: tail, ...fields } = run;
    const evidence: Evidence = await workflow.records.attachEvidence(slug, {
      type: CHECK_EVIDENCE_TYPE[run.kind],
      reference: `check:${run.name}@${commit.slice(0, 12)}`,
      summary: `${run.name}: exit ${run.exit_code} in ${run.duration_ms} ms on ${branch}${run.passed ? '' : `\n${tail.slice(-1000)}`}`,
      passed: run.passed,
      data: { ...fields, branch, commit },
      actor: 'ci:local',
    });
    recorded.push({ ...fields, evidence_id: evidence.id });
  }
  const failed = recorded.filter((r) => r.exit_code !== 0 || r.timed_out);
  if (failed.length > 0)
    throw new WorkflowError(
      'gate_failed',
      `validate: ${failed.length} of ${recorded.length} checks failed on ${branch}: ${failed.map((r) => `${r.name} (exit ${r.exit_code})`).join(', ')}; ${slug} stays ${feature.state}`,
      { details: { branch, commit, failed: failed.map((r) => ({ name: r.name, exit_code: r.exit_code, evidence_id: r.evidence_id })) } },
    );
  const transition = await workflow.advance(slug, 'validate', {
    actor: options.actor,
    evidence_refs: recorded.map((r) => r.evidence_id),
  });
  return { branch, commit, runs: recorded, transition };
}
