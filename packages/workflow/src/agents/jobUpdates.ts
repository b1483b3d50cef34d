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
