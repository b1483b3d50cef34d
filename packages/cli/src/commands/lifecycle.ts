/**
 * @module lifecycle
 * The lifecycle commands: `specify` (creates the feature and versions its
 * spec), `research`, `plan` (adds work packages), `implement` (runs agents
 * with review cycles, showing progress), `validate`, `ship` and
 * `retrospective`. Each moves the feature one step through the domain,
 * which checks the gates and writes the audit entry.
 */
import { resolve } from 'node:path';
import type { Feature, FeatureTransitionResult } from '@switchyard/workflow';
import { readArgumentFile } from '../argumentFile.js';
import { CliError } from '../errors.js';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import { idList, withRuntime } from './shared.js';

/** What a lifecycle move reports. */
function moved(result: FeatureTransitionResult) {
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

/** `yard research|validate|ship|retrospective <slug>`. */
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

/** `yard plan <slug> [--wp <title>]…`: move to PLANNED (unless adding packages to a planned feature), then add the packages. */
export function planCommand(ctx: CommandContext, slug: string, opts: { wp: string[]; force?: boolean; evidence?: string }) {
  return withRuntime(ctx, async (rt) => {
    const before = await rt.workflow.getFeature(slug);
    // Move first, so a refused move adds nothing.
    const transition =
      ['CREATED', 'SPECIFIED', 'RESEARCHED'].includes(before.state) || opts.wp.length === 0
        ? await rt.workflow.advance(slug, 'plan', {
            actor: rt.actor,
            force: opts.force === true,
            evidence_refs: idList(opts.evidence, '--evidence'),
          })
        : undefined;
    const added = [];
    for (const title of opts.wp) added.push(await rt.workflow.createWorkPackage(slug, { title, actor: rt.actor }));
    const lines = [...(transition ? [movedText(transition)] : []), ...added.map((w) => `added work package ${w.sequence}: ${w.title}`)];
    emit(
      ctx.io,
      ctx.globals.output,
      { feature_slug: slug, transition: transition ? moved(transition) : null, work_packages_added: added },
      { text: lines.join('\n') },
    );
  });
}

export { implementCommand } from './implement.js';
