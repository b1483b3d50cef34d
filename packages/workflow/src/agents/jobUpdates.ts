/**
 * @module jobUpdates
 * Writes to an agent job that respect its end. A job is ended by whichever
 * process gets there first: the dispatcher running it (Completed, Failed),
 * `yard jobs cancel` in another process (Cancelled), or recovery after a
 * crash (Failed). Each write reads the job under its feature's lock (on
 * SQLite, the database's write lock), so a later write never turns an ended
 * job back into a running one, or rewrites how it ended.
 */
import type { AgentJob, JobState } from '../domain/records.js';
import { NotFoundError } from '../errors.js';
import type { WorkflowStore } from '../store/workflowStore.js';
import type { JobOwner } from './jobOwner.js';
import { stopRecordedProcessGroup } from './processGroup.js';

/** TERM, then KILL after this long, for an agent left running by a process that is gone. */
const ORPHAN_GRACE_MS = 2000;

/** States after which nothing changes a job. */
export const ENDED_JOB_STATES: ReadonlySet<JobState> = new Set(['Completed', 'Failed', 'Cancelled']);

/**
 * Applies `patch` to job `id` unless it has ended; `applied` tells which.
 *
 * @example
 * ```ts
 * const { job, applied } = await updateUnlessEnded(store, id, { state: 'Cancelled', outcome: 'cancelled' });
 * if (!applied) console.log(`job ${id} already ended: ${job.state}`);
 * ```
 */
export function updateUnlessEnded(
  store: WorkflowStore,
  id: string,
  patch: Partial<Omit<AgentJob, 'id' | 'created_at'>>,
): Promise<{ job: AgentJob; applied: boolean }> {
  return store.transact(async (tx) => {
    const seen = await tx.getJob(id);
    if (!seen) throw new NotFoundError('job', id);
    await tx.lock(seen.feature_slug);
    // Read again under the lock: another process may have ended it meanwhile.
    const current = (await tx.getJob(id)) ?? seen;
    if (ENDED_JOB_STATES.has(current.state)) return { job: current, applied: false };
    return { job: await tx.updateJob(id, patch), applied: true };
  });
}

/** What {@link cancelInStore} did. */
export interface StoredCancel {
  job: AgentJob;
  /** False when the job had ended already (it is returned as it ended). */
  applied: boolean;
  /** The process running the job was gone, and its agent, still running, was stopped here. */
  agentStopped: boolean;
}

/**
 * Cancels a job run by another process, or by none: marks it Cancelled in the store, where the process running
 * it looks (and then stops its agent). A process that is gone (`owner` judges it dead: killed outright) stops
 * nothing, so the agent's recorded process group is stopped here.
 *
 * @example
 * ```ts
 * const { applied, agentStopped } = await cancelInStore(store, id, { by: 'alice', at: new Date().toISOString(), owner: processJobOwner() });
 * ```
 */
export async function cancelInStore(
  store: WorkflowStore,
  id: string,
  options: { by: string; at: string; owner: JobOwner },
): Promise<StoredCancel> {
  // Checked and written under one lock: a job that ends meanwhile (its dispatcher finishing) keeps how it ended.
  const { job, applied } = await updateUnlessEnded(store, id, {
    state: 'Cancelled',
    outcome: 'cancelled',
    error: `cancelled by ${options.by}`,
    finished_at: options.at,
    updated_at: options.at,
  });
  const orphaned = applied && job.owner !== undefined && options.owner.isAlive(job.owner) === false;
  const agentStopped = orphaned && job.agent_process !== undefined && (await stopRecordedProcessGroup(job.agent_process, ORPHAN_GRACE_MS));
  return { job, applied, agentStopped };
}
