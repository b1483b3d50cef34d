/**
 * @module transitionChecks
 * Checks a transition makes inside its transaction, besides the state
 * machine and the gates: prerequisites done before a package starts, and
 * cited evidence belonging to the target.
 */
import { InvalidArgumentError, WorkflowError } from '../errors.js';
import type { WorkflowReader } from '../store/workflowStore.js';
import type { Feature, WorkPackage } from './model.js';
import { effectiveDependencies } from './waves.js';

/** Throws `conflict` (with `details.waiting_on`) unless every prerequisite of `wp` is DONE. */
export async function assertPrerequisitesDone(tx: WorkflowReader, feature: Feature, wp: WorkPackage): Promise<void> {
  const all = await tx.listWorkPackages(feature.id);
  const prerequisites = effectiveDependencies(all).get(wp.sequence) ?? new Set<number>();
  const waiting = all.filter((w) => prerequisites.has(w.sequence) && w.state !== 'DONE').map((w) => w.sequence);
  if (waiting.length > 0) {
    throw new WorkflowError(
      'conflict',
      `work package ${wp.sequence} waits for ${waiting.join(', ')} (dependencies or shared files) to be DONE`,
      {
        details: { waiting_on: waiting },
      },
    );
  }
}

/** Throws `invalid_argument` (field `evidence_refs`) unless every cited evidence id belongs to the target. */
export async function checkEvidenceRefs(
  tx: WorkflowReader,
  feature: Feature,
  wp: WorkPackage | null,
  refs: readonly number[],
): Promise<void> {
  for (const id of refs) {
    const evidence = await tx.getEvidence(id);
    if (!evidence || evidence.feature_id !== feature.id || (wp !== null && evidence.wp_id !== null && evidence.wp_id !== wp.id)) {
      throw new InvalidArgumentError('evidence_refs', `evidence ${id} does not belong to this ${wp ? 'work package' : 'feature'}`);
    }
  }
}
