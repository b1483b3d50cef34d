/**
 * @module agentDispatcher
 * Agent jobs: each dispatch creates a job (UUID v4, `Pending`), runs the
 * review loop in the background (`Running`), and ends it `Completed`,
 * `Failed` or `Cancelled`. Jobs live in the workflow store; every state
 * change and every piece of agent activity is an event.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { parseInput } from '../domain/inputs.js';
import type { AgentJob, AgentProcessRecord, JobState } from '../domain/records.js';
import { asWorkflowError, InvalidArgumentError, NotFoundError, WorkflowError } from '../errors.js';
import type { AgentEvent } from '../events.js';
import { isoNow } from '../util/clock.js';
import type { AgentAdapter, AgentConfig } from './agentAdapter.js';
import { type JobOwner, processJobOwner } from './jobOwner.js';
import { cancelInStore, ENDED_JOB_STATES, updateUnlessEnded } from './jobUpdates.js';
import { stopRecordedProcessGroup } from './processGroup.js';
import { ReviewLoop, type ReviewLoopDeps } from './reviewLoop.js';

export const agentConfigInput = z.object({
  kind: z.string().min(1),
  timeout_ms: z
    .number()
    .int()
    .min(1000)
    .max(24 * 3_600_000)
    .default(30 * 60_000),
  review_cycles: z.number().int().min(1).max(20).default(3),
});

/** Options of {@link AgentDispatcher}. */
export interface AgentDispatcherOptions extends ReviewLoopDeps {
  /** Adapters by kind (`process`, `agent-session`, `mock`, …). */
  adapters: readonly AgentAdapter[];
  /** Defaults for `dispatch` (kind defaults to the first adapter). */
  defaults?: Partial<AgentConfig>;
  /** Names this process in its jobs and judges other processes' (default {@link processJobOwner}). */
  owner?: JobOwner;
}

const FINAL = ENDED_JOB_STATES;
/** TERM, then KILL after this long, for the agent of an interrupted job found still running. */
const RECOVERY_GRACE_MS = 2000;

/**
 * @example
 * ```ts
 * const dispatcher = new AgentDispatcher({ workflow, git, reviewer: new HeuristicReviewer(), adapters: [new ProcessAgentAdapter({ command: 'my-agent' })] });
 * const job = await dispatcher.dispatch('001-login', 1, { review_cycles: 2 });
 * const done = await dispatcher.wait(job.id);
 * ```
 */
export class AgentDispatcher {
  private readonly loop: ReviewLoop;
  private readonly adapters: Map<string, AgentAdapter>;
  private readonly running = new Map<string, { controller: AbortController; done: Promise<AgentJob> }>();
  private readonly owner: JobOwner;

  constructor(private readonly options: AgentDispatcherOptions) {
    this.loop = new ReviewLoop(options);
    this.owner = options.owner ?? processJobOwner();
    this.adapters = new Map(options.adapters.map((a) => [a.kind, a]));
    if (this.adapters.size === 0) throw new InvalidArgumentError('adapters', 'at least one agent adapter is required');
  }

  private get workflow() {
    return this.options.workflow;
  }

  /** Writes to a job that has not ended; one another process ended (a cancel) is returned as it is. */
  private async update(id: string, patch: Partial<AgentJob>): Promise<AgentJob> {
    const now = isoNow(this.workflow.clock);
    const { job, applied } = await updateUnlessEnded(this.workflow.store, id, { ...patch, updated_at: now });
    if (applied && patch.state)
      this.workflow.events.emit('workflow:agent_job', { jobId: id, state: patch.state, at: this.workflow.clock.now() });
    return job;
  }

  /** Creates a job for a work package and starts it; resolves with the `Pending` job. */
  async dispatch(featureSlug: string, wpSequence: number, config: Partial<AgentConfig> = {}): Promise<AgentJob> {
    const merged = parseInput(agentConfigInput, { kind: this.options.adapters[0]!.kind, ...this.options.defaults, ...config }, 'config');
    const adapter = this.adapters.get(merged.kind);
    if (!adapter)
      throw new InvalidArgumentError('config.kind', `no ${merged.kind} adapter; configured: ${[...this.adapters.keys()].join(', ')}`);
    await this.workflow.getWorkPackage(featureSlug, wpSequence);
    const now = isoNow(this.workflow.clock);
    const job: AgentJob = {
      id: randomUUID(),
      feature_slug: featureSlug,
      wp_sequence: wpSequence,
      kind: adapter.kind,
      owner: this.owner.id,
      state: 'Pending',
      review_cycles: 0,
      max_review_cycles: merged.review_cycles,
      outcome: null,
      result: null,
      error: null,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
    };
    // The check and the insert share one transaction under the feature's lock: two dispatches
    // (two processes, two servers) for one package must not both see "no active job".
    await this.workflow.store.transact(async (tx) => {
      await tx.lock(featureSlug);
      const active = (await tx.listJobs({ featureSlug })).find((j) => j.wp_sequence === wpSequence && !FINAL.has(j.state));
      if (active)
        throw new WorkflowError('conflict', `work package ${wpSequence} already has job ${active.id} (${active.state})`, {
          details: { job_id: active.id },
        });
      await tx.insertJob(job);
    });
    this.workflow.events.emit('workflow:agent_job', { jobId: job.id, state: 'Pending', at: this.workflow.clock.now() });
    const controller = new AbortController();
    const done = this.execute(job, adapter, merged, controller.signal);
    this.running.set(job.id, { controller, done });
    void done.finally(() => this.running.delete(job.id));
    return job;
  }

  private async execute(job: AgentJob, adapter: AgentAdapter, config: AgentConfig, signal: AbortSignal): Promise<AgentJob> {
    // Let dispatch() return the Pending job before anything runs.
    await Promise.resolve();
    // Events are stored, in order, before they are emitted: a server in another process streams them from the
    // store, and one here gets the id to resume after. A store that refuses one still lets the job go on.
    let stored: Promise<void> = Promise.resolve();
    const emit = (kind: AgentEvent['kind'], data: Record<string, unknown>) => {
      if (kind === 'cycle') void this.update(job.id, { review_cycles: data.cycle as number }).catch(() => undefined);
      const event: AgentEvent = {
        jobId: job.id,
        featureSlug: job.feature_slug,
        wpSequence: job.wp_sequence,
        kind,
        data,
        at: this.workflow.clock.now(),
      };
      stored = stored.then(async () => {
        const saved = await this.workflow.store.transact((tx) => tx.appendAgentEvent(event)).catch(() => event);
        this.workflow.events.emit('workflow:agent_event', saved);
      });
    };
    try {
      return await this.runJob(job, adapter, config, signal, emit, () => stored);
    } finally {
      await stored;
    }
  }

  private async runJob(
    job: AgentJob,
    adapter: AgentAdapter,
    config: AgentConfig,
    signal: AbortSignal,
    emit: (kind: AgentEvent['kind'], data: Record<string, unknown>) => void,
    /** Resolves once every event emitted so far is stored: the job ends in the store only after its events. */
    flush: () => Promise<void>,
  ): Promise<AgentJob> {
    try {
      await this.update(job.id, { state: 'Running', started_at: isoNow(this.workflow.clock) });
      emit('status', { state: 'Running' });
      // A process agent's group, recorded so that a process recovering this job after a crash can stop it.
      const recordProcess = (group: AgentProcessRecord) => void this.update(job.id, { agent_process: group }).catch(() => undefined);
      const report = await this.loop.run(job, adapter, config, signal, emit, recordProcess);
      const state: JobState = report.outcome === 'approved' ? 'Completed' : 'Failed';
      emit('status', { state, outcome: report.outcome });
      await flush();
      return await this.update(job.id, {
        state,
        outcome: report.outcome,
        review_cycles: report.cycles,
        result: report.result,
        finished_at: isoNow(this.workflow.clock),
      });
    } catch (error) {
      const cancelled = signal.aborted;
      const state: JobState = cancelled ? 'Cancelled' : 'Failed';
      const message = cancelled ? 'cancelled' : asWorkflowError(error, 'upstream_failed').message;
      emit('status', { state, error: message });
      await flush();
      return this.update(job.id, {
        state,
        outcome: cancelled ? 'cancelled' : 'error',
        error: message,
        finished_at: isoNow(this.workflow.clock),
      });
    }
  }

  /** Resolves when the job has ended. */
  async wait(jobId: string): Promise<AgentJob> {
    const running = this.running.get(jobId);
    return running ? running.done : this.get(jobId);
  }

  /**
   * Cancels a job; a job that already ended is returned as it is. A job this process runs ends once its agent
   * has stopped. One another process runs is marked Cancelled in the store, where that process looks (it stops
   * its agent within a second; see `cancelInStore`); if that process is gone, its agent is stopped here.
   */
  async cancel(jobId: string, by = 'a request to this server'): Promise<AgentJob> {
    const running = this.running.get(jobId);
    if (running) {
      running.controller.abort(new WorkflowError('cancelled', 'the job was cancelled'));
      return running.done;
    }
    // An unknown id is refused there (NotFoundError), as `get` refuses it.
    const { job, applied } = await cancelInStore(this.workflow.store, jobId, { by, at: isoNow(this.workflow.clock), owner: this.owner });
    if (applied) this.workflow.events.emit('workflow:agent_job', { jobId, state: 'Cancelled', at: this.workflow.clock.now() });
    return job;
  }

  async get(jobId: string): Promise<AgentJob> {
    const job = await this.workflow.store.reader.getJob(jobId);
    if (!job) throw new NotFoundError('job', jobId);
    return job;
  }

  list(filter: { featureSlug?: string; state?: JobState } = {}): Promise<AgentJob[]> {
    return this.workflow.store.reader.listJobs(filter);
  }

  /**
   * Marks jobs a stopped process left `Pending` or `Running` as `Failed`
   * (interrupted); returns them. A crashed process could not stop its agent: what is left of the agent's
   * recorded process group is stopped first. Jobs a live process runs (another `yard
   * implement`, another server) are left alone, as are jobs of another host,
   * which this process cannot judge.
   */
  async recoverInterrupted(): Promise<AgentJob[]> {
    // A job without an owner was recorded before owners were: nothing tells whether its process lives.
    const abandoned = (j: AgentJob) => !j.owner || this.owner.isAlive(j.owner) === false;
    const stale = (await this.list()).filter((j) => !FINAL.has(j.state) && !this.running.has(j.id) && abandoned(j));
    return Promise.all(
      stale.map(async (j) => {
        // A crashed owner could not stop its agent, which may still be changing the worktree.
        const stopped = j.agent_process !== undefined && (await stopRecordedProcessGroup(j.agent_process, RECOVERY_GRACE_MS));
        return this.update(j.id, {
          state: 'Failed',
          outcome: 'interrupted',
          error: stopped
            ? 'the process running this job stopped; its agent was still running and has been stopped'
            : 'the process running this job stopped',
          finished_at: isoNow(this.workflow.clock),
        });
      }),
    );
  }
}
