/**
 * @module jobs
 * `yard jobs list|show|cancel` over the agent jobs in the store, and
 * `yard sync push|pull|status` over the sync engine.
 */
import { type AgentJob, cancelInStore, processJobOwner } from '@switchyard/workflow';
import { CliError } from '../errors.js';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import type { Runtime } from '../runtime.js';
import { withRuntime } from './shared.js';

const JOB_COLUMNS = ['id', 'feature_slug', 'wp_sequence', 'kind', 'state', 'outcome', 'review_cycles', 'created_at', 'finished_at'];

/** `yard jobs list [--feature S] [--state S]`, newest first. */
export function jobsList(ctx: CommandContext, opts: { feature?: string; state?: AgentJob['state'] }) {
  return withRuntime(ctx, async (rt) => {
    const jobs = await rt.store.reader.listJobs({
      ...(opts.feature ? { featureSlug: opts.feature } : {}),
      ...(opts.state ? { state: opts.state } : {}),
    });
    jobs.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
    emit(ctx.io, ctx.globals.output, jobs, { columns: JOB_COLUMNS });
  });
}

async function getJob(rt: Runtime, id: string): Promise<AgentJob> {
  const job = await rt.store.reader.getJob(id);
  if (!job) {
    const { NotFoundError } = await import('@switchyard/workflow');
    throw new NotFoundError('job', id);
  }
  return job;
}

/** `yard jobs show <id>`. */
export function jobsShow(ctx: CommandContext, id: string) {
  return withRuntime(ctx, async (rt) => {
    emit(ctx.io, ctx.globals.output, await getJob(rt, id));
  });
}

/**
 * `yard jobs cancel <id>`: marks a pending or running job Cancelled. The
 * process running it (`yard implement`, `yard serve`) sees that within a
 * second and stops the agent. When that process is gone (killed outright),
 * nothing would: the agent's recorded process group is stopped here. A job
 * that already ended is shown as it is.
 */
export function jobsCancel(ctx: CommandContext, id: string) {
  return withRuntime(ctx, async (rt) => {
    await getJob(rt, id);
    const at = new Date(rt.workflow.clock.now()).toISOString();
    const { job, applied, agentStopped } = await cancelInStore(rt.store, id, { by: rt.actor, at, owner: processJobOwner() });
    if (!applied) {
      emit(ctx.io, ctx.globals.output, job, { text: `job ${id} already ended: ${job.state}` });
      return;
    }
    rt.events.emit('workflow:agent_job', { jobId: id, state: 'Cancelled', at: rt.workflow.clock.now() });
    emit(ctx.io, ctx.globals.output, job, {
      text: agentStopped ? `job ${id} cancelled; its agent, left running by a process that is gone, was stopped` : `job ${id} cancelled`,
    });
  });
}

/** Sync needs the system's section in the config: without it, say which section and where to read about it. */
function requireSystem(rt: Runtime, system: 'tracker' | 'code_host'): void {
  if (rt.config[system]) return;
  const what =
    system === 'code_host'
      ? 'no code host is configured: add a code_host section (owner, repo, and token, client_id or app_id)'
      : 'no tracker is configured: add a tracker section (kind and its credentials)';
  throw new CliError('invalid_argument', `${what} to the config (.agileplus/config.yaml, or the --config file); see docs/trackers.md`, {
    field: `config.${system}`,
  });
}

/** `yard sync push <slug> [--system tracker|code_host]`. */
export function syncPush(ctx: CommandContext, slug: string, opts: { system: 'tracker' | 'code_host' }) {
  return withRuntime(ctx, async (rt) => {
    requireSystem(rt, opts.system);
    const result = await rt.sync().push(slug, opts.system);
    emit(ctx.io, ctx.globals.output, result, {
      text: `${slug} -> ${opts.system}: ${result.status} (${result.remote_url ?? result.remote_id})`,
    });
    return result.status === 'conflict' ? 5 : 0;
  });
}

/** `yard sync pull <slug> [--system tracker|code_host]`. */
export function syncPull(ctx: CommandContext, slug: string, opts: { system: 'tracker' | 'code_host' }) {
  return withRuntime(ctx, async (rt) => {
    requireSystem(rt, opts.system);
    const result = await rt.sync().pull(slug, opts.system);
    const drift = result.state_drift ? `; remote state ${result.state_drift.remote} differs from ${result.state_drift.local}` : '';
    emit(ctx.io, ctx.globals.output, result, { text: `${slug} <- ${opts.system}: ${result.status}${drift}` });
    return result.status === 'conflict' ? 5 : 0;
  });
}

/** `yard sync status [--system S]`. */
export function syncStatus(ctx: CommandContext, opts: { system?: 'tracker' | 'code_host' }) {
  return withRuntime(ctx, async (rt) => {
    emit(ctx.io, ctx.globals.output, await rt.sync().status(opts.system), {
      columns: ['system', 'local_key', 'remote_id', 'remote_url', 'updated_at'],
    });
  });
}
