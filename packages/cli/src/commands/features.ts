/**
 * @module features
 * Reading features and driving work packages from the command line:
 * `feature list|show`, `wp add|list|move` and `evidence`. The domain checks
 * every move and gate; these commands only translate.
 */
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import { idList, intOption, withRuntime, wordList } from './shared.js';

const FEATURE_COLUMNS = ['slug', 'state', 'title', 'target_branch', 'updated_at'];
const WP_COLUMNS = ['sequence', 'wave', 'state', 'title', 'depends_on', 'file_scope', 'agent_id', 'pr_url'];

/** `yard feature list [--state S]`. */
export function featureList(ctx: CommandContext, opts: { state?: string }) {
  return withRuntime(ctx, async (rt) => {
    const features = await rt.workflow.listFeatures(opts.state !== undefined ? { state: opts.state } : {});
    emit(ctx.io, ctx.globals.output, features, { columns: FEATURE_COLUMNS });
  });
}

/** `yard feature show <slug>`: the feature, its packages with waves, and the gate of its next step. */
export function featureShow(ctx: CommandContext, slug: string) {
  return withRuntime(ctx, async (rt) => {
    const feature = await rt.workflow.getFeature(slug);
    const workPackages = await withWaves(rt.workflow, slug);
    const nextGate = feature.state === 'RETROSPECTED' ? null : await rt.workflow.checkGovernance(slug);
    const result = { feature, work_packages: workPackages, next_gate: nextGate };
    if (ctx.globals.output === 'json') return emit(ctx.io, 'json', result);
    emit(ctx.io, ctx.globals.output, feature);
    ctx.io.stdout('\n');
    emit(ctx.io, ctx.globals.output, workPackages, { columns: WP_COLUMNS });
    if (nextGate) {
      ctx.io.stdout(`\nnext: ${nextGate.transition} ${nextGate.passed ? 'passes its gates' : 'is refused by:'}\n`);
      for (const v of nextGate.violations) ctx.io.stdout(`  - ${v.rule_id}: ${v.message}\n`);
    }
  });
}

async function withWaves(workflow: import('@switchyard/workflow').Workflow, slug: string) {
  const [packages, waves] = await Promise.all([workflow.listWorkPackages(slug), workflow.waves(slug)]);
  const waveOf = new Map(waves.flatMap((wave, i) => wave.map((seq) => [seq, i + 1] as const)));
  return packages.map((wp) => ({ ...wp, wave: waveOf.get(wp.sequence) ?? null }));
}

/** `yard wp add <slug> --title T [--depends-on 1,2] [--file-scope a,b]`. */
export function wpAdd(ctx: CommandContext, slug: string, opts: { title: string; dependsOn?: string; fileScope?: string }) {
  return withRuntime(ctx, async (rt) => {
    const wp = await rt.workflow.createWorkPackage(slug, {
      title: opts.title,
      depends_on: idList(opts.dependsOn, '--depends-on'),
      file_scope: wordList(opts.fileScope),
      actor: rt.actor,
    });
    emit(ctx.io, ctx.globals.output, wp, { text: `${slug}: added work package ${wp.sequence} (${wp.state}): ${wp.title}` });
  });
}

/** `yard wp list <slug>`. */
export function wpList(ctx: CommandContext, slug: string) {
  return withRuntime(ctx, async (rt) => {
    emit(ctx.io, ctx.globals.output, await withWaves(rt.workflow, slug), { columns: WP_COLUMNS });
  });
}

/** `yard wp move <slug> <sequence> <state>`. */
export function wpMove(ctx: CommandContext, slug: string, sequence: string, state: string, opts: { evidence?: string }) {
  return withRuntime(ctx, async (rt) => {
    const seq = intOption(sequence, 'sequence', { min: 1 })!;
    const r = await rt.workflow.transitionWorkPackage(slug, seq, {
      to: state,
      actor: rt.actor,
      evidence_refs: idList(opts.evidence, '--evidence'),
    });
    emit(
      ctx.io,
      ctx.globals.output,
      { feature_slug: slug, wp_sequence: seq, from: r.from, to: r.to, work_package: r.work_package, entry: r.entry },
      { text: `${slug} wp${seq}: ${r.from} -> ${r.to}, audit entry #${r.entry.id}` },
    );
  });
}

/** `yard evidence <slug> --type T --reference R [--wp N] [--passed|--failed]`. */
export function evidenceAdd(
  ctx: CommandContext,
  slug: string,
  opts: { type: string; reference: string; wp?: string; summary?: string; passed?: boolean; failed?: boolean },
) {
  return withRuntime(ctx, async (rt) => {
    const wp = intOption(opts.wp, '--wp', { min: 1 });
    const evidence = await rt.workflow.records.attachEvidence(slug, {
      ...(wp !== undefined ? { wp_sequence: wp } : {}),
      type: opts.type as never,
      reference: opts.reference,
      ...(opts.summary !== undefined ? { summary: opts.summary } : {}),
      passed: opts.passed ? true : opts.failed ? false : null,
      actor: rt.actor,
    });
    emit(ctx.io, ctx.globals.output, evidence, {
      text: `${slug}${wp !== undefined ? ` wp${wp}` : ''}: evidence #${evidence.id} (${evidence.type}, ${opts.failed ? 'failed' : opts.passed ? 'passed' : 'no verdict'})`,
    });
  });
}
