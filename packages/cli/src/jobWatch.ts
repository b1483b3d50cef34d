/**
 * @module jobWatch
 * Cancellation across processes: `yard jobs cancel <id>` marks a job
 * Cancelled in the store, and the process that runs the job (`yard
 * implement`, `yard serve`) notices within `intervalMs` and stops its agent
 * through the dispatcher. Jobs are tracked through the workflow's
 * `workflow:agent_job` events.
 */
import type { AgentDispatcher, WorkflowEventEmitter, WorkflowStore } from '@switchyard/workflow';

/**
 * Starts watching; returns the stop function.
 *
 * @example
 * ```ts
 * const stop = watchCancellations(rt.store, dispatcher, rt.events);
 * ```
 */
export function watchCancellations(
  store: WorkflowStore,
  dispatcher: AgentDispatcher,
  events: WorkflowEventEmitter,
  intervalMs = 1000,
): { running: ReadonlySet<string>; stop(): void } {
  const running = new Set<string>();
  const onJob = (event: { jobId: string; state: string }) => {
    if (event.state === 'Pending' || event.state === 'Running') running.add(event.jobId);
    else running.delete(event.jobId);
  };
  events.on('workflow:agent_job', onJob);
  const timer = setInterval(() => {
    for (const id of running) {
      void store.reader
        .getJob(id)
        .then((job) => {
          if (job?.state === 'Cancelled') return dispatcher.cancel(id);
        })
        .catch(() => undefined);
    }
  }, intervalMs);
  timer.unref();
  return {
    running,
    stop: () => {
      clearInterval(timer);
      events.off('workflow:agent_job', onJob);
    },
  };
}
