/**
 * @module lifecycleWork
 * The lifecycle commands that do their step's work before they move the
 * feature: `research` (writes research.md), `validate` (runs the checks on
 * the feature branch and records them as evidence), `ship` (merges, pushes,
 * opens and merges the pull request, closes the tracker item) and
 * `retrospective` (writes retrospective.md). `--force` keeps the plain
 * move: it skips steps, and their work, on the record.
 */
import type { FeatureTransitionResult } from '@switchyard/workflow';
import { researchFeature, retrospectiveFeature, shipFeature, validateFeature } from '@switchyard/workflow/lifecycle';
import { resolved } from '../config.js';
import { CliError } from '../errors.js';
import { githubWebUrl } from '../integrations.js';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import type { Runtime } from '../runtime.js';
import { advanceCommand, moved } from './lifecycle.js';
import { withRuntime } from './shared.js';

interface StepOptions {
  force?: boolean;
  evidence?: string;
}

function movedLine(t: FeatureTransitionResult): string {
  return `${t.feature.slug}: ${t.from} -> ${t.to}, audit entry #${t.entry.id}`;
}

function progress(ctx: CommandContext): (line: string) => void {
  return (line) => {
    if (ctx.globals.output !== 'json') ctx.io.stderr(`${line}\n`);
  };
}

/** `yard research <slug>`: writes `<slug>/research.md` (the gateway drafts it when configured). */
export function researchCommand(ctx: CommandContext, slug: string, opts: StepOptions) {
  if (opts.force) return advanceCommand(ctx, 'research', slug, opts);
  return withRuntime(ctx, async (rt) => {
    const gateway = rt.gateway();
    const r = await researchFeature(slug, {
      workflow: rt.workflow,
      git: rt.git,
      artifacts: rt.artifacts,
      actor: rt.actor,
      ...(gateway ? { gateway } : {}),
    });
    emit(
      ctx.io,
      ctx.globals.output,
      { ...moved(r.transition), artifact: r.artifact, drafted_by: r.drafted_by, files: r.material.files },
      {
        text: [
          `wrote ${r.artifact.path} (${r.drafted_by === 'llm' ? 'drafted through the gateway' : 'from the template'}; ${r.material.files.length} files touched)`,
          movedLine(r.transition),
        ].join('\n'),
      },
    );
  });
}

/** `yard validate <slug>`: the configured checks on the feature branch; exit 4 when one fails. */
export function validateCommand(ctx: CommandContext, slug: string, opts: StepOptions) {
  if (opts.force) return advanceCommand(ctx, 'validate', slug, opts);
  return withRuntime(ctx, async (rt) => {
    const say = progress(ctx);
    const report = await validateFeature(slug, {
      workflow: rt.workflow,
      git: rt.git,
      checks: rt.checks(),
      actor: rt.actor,
      onCheck: (e) =>
        say(
          e.state === 'running'
            ? `[${slug}] ${e.check}: running`
            : `[${slug}] ${e.check}: ${e.state} (exit ${e.exit_code}, ${e.duration_ms} ms)`,
        ),
    });
    emit(
      ctx.io,
      ctx.globals.output,
      { ...moved(report.transition), branch: report.branch, commit: report.commit, checks: report.runs },
      {
        text: [
          ...report.runs.map(
            (r) => `${r.name}: exit ${r.exit_code}, ${r.duration_ms} ms, output ${r.output_hash} (evidence #${r.evidence_id})`,
          ),
          movedLine(report.transition),
        ].join('\n'),
      },
    );
  });
}

/**
 * The remote `ship` pushes to: `--remote`, `ci.remote` in the config, else `origin` when the repository has it.
 * With a code host and nowhere to push, shipping would merge locally and open no pull request without a word:
 * refused before anything moves, saying what to add (or `--no-push` to merge locally on purpose).
 */
async function shipRemote(rt: Runtime, given: string | undefined, push: boolean): Promise<string | undefined> {
  if (!push) return undefined;
  const remote = given ?? (await rt.defaultRemote());
  if (remote === undefined && rt.config.code_host) {
    const host = resolved(rt.config.code_host);
    const url = `${githubWebUrl(host)}/${host.owner}/${host.repo}.git`;
    throw new CliError(
      'invalid_argument',
      `code_host (${host.owner}/${host.repo}) ships by pushing the target branch and opening a pull request, and this repository has no remote to push to: add it (git remote add origin ${url}), pass --remote, or pass --no-push to merge locally only`,
      { field: 'remote', fix: `git remote add origin ${url}` },
    );
  }
  return remote;
}

/** `yard ship <slug>`: merge into the target branch (and push, open the PR, close the tracker item). */
export function shipCommand(ctx: CommandContext, slug: string, opts: StepOptions & { remote?: string; push?: boolean }) {
  if (opts.force) return advanceCommand(ctx, 'ship', slug, opts);
  return withRuntime(ctx, async (rt) => {
    const remote = await shipRemote(rt, opts.remote, opts.push !== false);
    const codeHost = remote ? rt.codeHost() : undefined;
    const report = await shipFeature(slug, {
      workflow: rt.workflow,
      git: rt.git,
      actor: rt.actor,
      ...(remote ? { remote } : {}),
      ...(codeHost ? { codeHost } : {}),
      ...(rt.config.tracker ? { sync: rt.sync() } : {}),
      onProgress: progress(ctx),
    });
    emit(
      ctx.io,
      ctx.globals.output,
      {
        ...moved(report.transition),
        target_branch: report.target_branch,
        merged: report.merged,
        commit: report.commit,
        pushed: report.pushed,
        pull_request: report.pull_request,
        tracker: report.tracker ? { remote_id: report.tracker.remote_id, status: report.tracker.status } : null,
      },
      { text: movedLine(report.transition) },
    );
  });
}

/** `yard retrospective <slug>`: writes `<slug>/retrospective.md` from the audit trail and the jobs. */
export function retrospectiveCommand(ctx: CommandContext, slug: string, opts: StepOptions) {
  if (opts.force) return advanceCommand(ctx, 'retrospective', slug, opts);
  return withRuntime(ctx, async (rt) => {
    const r = await retrospectiveFeature(slug, { workflow: rt.workflow, artifacts: rt.artifacts, actor: rt.actor });
    emit(
      ctx.io,
      ctx.globals.output,
      { ...moved(r.transition), artifact: r.artifact, facts: r.facts },
      { text: [`wrote ${r.artifact.path}`, movedLine(r.transition)].join('\n') },
    );
  });
}
