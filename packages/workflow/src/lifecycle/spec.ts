/**
 * @module spec
 * A feature's spec as the lifecycle commands read it: the newest version
 * of its `spec` contract (what `specify` versions), else its description.
 */
import type { Workflow } from '../workflow.js';

/**
 * @example
 * ```ts
 * const spec = await featureSpec(workflow, 'login');
 * ```
 */
export async function featureSpec(workflow: Workflow, slug: string): Promise<string> {
  const versions = await workflow.records.listContracts(slug, 'spec');
  const newest = versions.reduce<(typeof versions)[number] | undefined>((a, b) => (!a || b.version > a.version ? b : a), undefined);
  return newest?.content ?? (await workflow.getFeature(slug)).description;
}
