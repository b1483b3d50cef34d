/**
 * @module lifecycle
 * The lifecycle commands: `specify` (creates the feature and versions its
 * spec), `plan` (adds work packages: given, drafted by the model, or from
 * the spec's checklist), `implement` (runs agents with review cycles,
 * showing progress) and the plain forced move the others fall back to with
 * `--force` (see lifecycleWork for research, validate, ship and
 * retrospective). Each moves the feature through the domain, which checks
 * the gates and writes the audit entry.
 */
import { resolve } from 'node:path';
import type { Feature, FeatureTransitionResult } from '@switchyard/workflow';
import { addPlannedPackages, checklistPlan, featureSpec, modelPlan, type PlannedPackage } from '@switchyard/workflow/lifecycle';
import { readArgumentFile } from '../argumentFile.js';
import { CliError } from '../errors.js';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import { idList, withRuntime } from './shared.js';

/** What a lifecycle move reports. */
export function moved(result: FeatureTransitionResult) {
  return {
    feature_slug: result.feature.slug,
    from: result.from,
    to: result.to,
    skipped: result.skipped,
    state: result.feature.state,
    entry: result.entry,
  };
}

function movedText(result: FeatureTransitionResult): string {
  const skipped = result.skipped.length ? ` (forced past ${result.skipped.join(', ')})` : '';
  return `${result.feature.slug}: ${result.from} -> ${result.to}${skipped}, audit entry #${result.entry.id}`;
}

/** `yard research|validate|ship|retrospective <slug> --force`: the move alone. */
export function advanceCommand(ctx: CommandContext, command: string, slug: string, opts: { force?: boolean; evidence?: string }) {
  return withRuntime(ctx, async (rt) => {
    const result = await rt.workflow.advance(slug, command, {
      actor: rt.actor,
      force: opts.force === true,
      evidence_refs: idList(opts.evidence, '--evidence'),
    });
    emit(ctx.io, ctx.globals.output, moved(result), { text: movedText(result) });
  });
}

/** `yard specify <slug>`: create the feature if needed, version the spec, and move CREATED -> SPECIFIED. */
export function specifyCommand(
  ctx: CommandContext,
  slug: string,
  opts: { title?: string; description?: string; fromFile?: string; targetBranch?: string },
) {
  return withRuntime(ctx, async (rt) => {
    if (opts.description !== undefined && opts.fromFile !== undefined)
      throw new CliError('invalid_argument', 'give --description or --from-file, not both', { field: 'description' });
    const spec = opts.fromFile !== undefined ? await readArgumentFile(resolve(ctx.io.cwd, opts.fromFile), '--from-file') : opts.description;
    const existing = await rt.workflow.store.reader.getFeature(slug);
    let feature: Feature;
    let created = false;
    if (!existing) {
      if (opts.title === undefined)
        throw new CliError('invalid_argument', `--title: required to create feature ${JSON.stringify(slug)}`, { field: 'title' });
      feature = await rt.workflow.createFeature({
        slug,
        title: opts.title,
        description: spec ?? '',
        ...(opts.targetBranch !== undefined ? { target_branch: opts.targetBranch } : {}),
        actor: rt.actor,
      });
      created = true;
    } else if (opts.title !== undefined || spec !== undefined || opts.targetBranch !== undefined) {
      feature = await rt.workflow.updateFeature(slug, {
        ...(opts.title !== undefined ? { title: opts.title } : {}),
        ...(spec !== undefined ? { description: spec } : {}),
        ...(opts.targetBranch !== undefined ? { target_branch: opts.targetBranch } : {}),
        actor: rt.actor,
      });
    } else feature = existing;
    const contract =
      spec !== undefined ? await rt.workflow.records.addContract(slug, { name: 'spec', content: spec, actor: rt.actor }) : undefined;
    // Re-specifying a feature past CREATED updates its spec; with nothing to update, the domain says why it cannot move.
    const updated = existing !== undefined && (opts.title !== undefined || spec !== undefined || opts.targetBranch !== undefined);
    const transition =
      feature.state === 'CREATED' || !updated ? await rt.workflow.advance(slug, 'specify', { actor: rt.actor }) : undefined;
    const result = {
      feature: transition?.feature ?? feature,
      created,
      transition: transition ? moved(transition) : null,
      spec: contract
        ? { version: contract.contract.version, content_hash: contract.contract.content_hash, created: contract.created }
        : null,
    };
    const lines = [
      created ? `created feature ${slug}: ${feature.title}` : `feature ${slug}${updated ? ' updated' : ''}`,
      ...(contract ? [`spec version ${contract.contract.version}${contract.created ? '' : ' (unchanged)'}`] : []),
      ...(transition ? [movedText(transition)] : [`${slug} stays ${feature.state}`]),
    ];
    emit(ctx.io, ctx.globals.output, result, { text: lines.join('\n') });
  });
}

/**
 * `yard plan <slug> [--wp <title>]…`: move to PLANNED (unless adding packages to a planned feature), then add the
 * packages: the `--wp` titles; without them, for a feature with no packages yet, the model's plan through the
 * gateway, else the spec's task checklist.
 */
export function planCommand(ctx: CommandContext, slug: string, opts: { wp: string[]; force?: boolean; evidence?: string }) {
  return withRuntime(ctx, async (rt) => {
    const before = await rt.workflow.getFeature(slug);
    const existing = await rt.workflow.listWorkPackages(slug);
    // Decided (and a bad model answer refused) before anything moves, so a refused plan changes nothing.
    let planned: PlannedPackage[] = opts.wp.map((title) => ({ title, depends_on: [], file_scope: [] }));
    let source: 'wp' | 'llm' | 'checklist' | 'none' = opts.wp.length ? 'wp' : 'none';
    if (!opts.wp.length && existing.length === 0) {
      const gateway = rt.gateway();
      const spec = await featureSpec(rt.workflow, slug);
      planned = gateway ? await modelPlan(gateway, before.title, spec) : checklistPlan(spec);
      source = gateway ? 'llm' : planned.length ? 'checklist' : 'none';
    }
    const transition =
      ['CREATED', 'SPECIFIED', 'RESEARCHED'].includes(before.state) || opts.wp.length === 0
        ? await rt.workflow.advance(slug, 'plan', {
            actor: rt.actor,
            force: opts.force === true,
            evidence_refs: idList(opts.evidence, '--evidence'),
          })
        : undefined;
    const added = await addPlannedPackages(rt.workflow, slug, planned, rt.actor);
    const waves = await rt.workflow.waves(slug);
    const lines = [
      ...(transition ? [movedText(transition)] : []),
      ...added.map(
        (w) => `added work package ${w.sequence}: ${w.title}${w.depends_on.length ? ` (after ${w.depends_on.join(', ')})` : ''}`,
      ),
      ...(source === 'none' && existing.length === 0
        ? ['no work packages: pass --wp, add a "- [ ] task" checklist to the spec, or configure a gateway']
        : []),
      ...(added.length ? [`waves: ${waves.map((w) => `[${w.join(', ')}]`).join(' ')}`] : []),
    ];
    emit(
      ctx.io,
      ctx.globals.output,
      { feature_slug: slug, transition: transition ? moved(transition) : null, source, work_packages_added: added, waves },
      { text: lines.join('\n') },
    );
  });
}

export { implementCommand } from './implement.js';
