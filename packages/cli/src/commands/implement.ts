/**
 * @module implement
 * `yard implement <slug>`: moves the feature to IMPLEMENTING (from PLANNED)
 * and runs an agent job on each chosen work package through the domain's
 * dispatcher and review loop, wave by wave, `--parallel` at a time. Progress
 * (cycles, moves, verdicts; agent output with `-v`) streams to stderr while
 * it runs. Ctrl-C (or a closed terminal) cancels the running jobs; so does `yard jobs cancel <id>`
 * from another shell (this process watches the store for it). Jobs a killed
 * process left running are failed first, so their packages can run again.
 */
import type { AgentEvent, AgentJob, WorkPackage } from '@switchyard/workflow';
import { resolved } from '../config.js';
import { CliError } from '../errors.js';
import { githubWebUrl } from '../integrations.js';
import { watchCancellations } from '../jobWatch.js';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import type { Runtime } from '../runtime.js';
import { intOption, withRuntime } from './shared.js';

interface ImplementOptions {
  wp: string[];
  parallel: string;
  maxReviewCycles?: string;
  agent?: string;
  agentType?: string;
  agentCommand?: string;
  agentArg: string[];
  agentUrl?: string;
  timeout?: string;
}

/** One line of progress per agent event (output chunks only with -v). */
export function progressLine(event: AgentEvent, verbose: number): string | undefined {
  const tag = `[${event.featureSlug} wp${event.wpSequence}]`;
  const d = event.data;
  switch (event.kind) {
    case 'cycle':
      return `${tag} review cycle ${d.cycle}/${d.of}: agent running`;
    case 'transition':
      return `${tag} ${d.from} -> ${d.to} by ${d.actor}`;
    case 'review':
      return `${tag} review: ${d.approved ? 'approved' : 'changes requested'}${Array.isArray(d.comments) && d.comments.length ? ` (${d.comments.length} comments)` : ''}`;
    case 'status':
      return `${tag} job ${String(event.jobId).slice(0, 8)} ${d.state}${d.outcome ? ` (${d.outcome})` : ''}${d.error ? `: ${d.error}` : ''}`;
    case 'ci':
      if (d.state === 'pushed') return `${tag} pushed ${d.branch} (${String(d.commit).slice(0, 12)}) to ${d.remote} for its CI`;
      return d.state === 'running'
        ? `${tag} local CI: ${d.check} running`
        : `${tag} local CI: ${d.check} ${d.state} (exit ${d.exit_code}, ${d.duration_ms} ms)`;
    case 'output':
      return verbose > 0 ? String(d.chunk).replace(/\n$/, '').replace(/^/gm, `${tag} | `) : undefined;
    default:
      return undefined;
  }
}

async function choosePackages(rt: Runtime, slug: string, wanted: number[]): Promise<WorkPackage[][]> {
  const all = await rt.workflow.listWorkPackages(slug);
  if (wanted.length) {
    const bySeq = new Map(all.map((w) => [w.sequence, w]));
    return [
      wanted.map((seq) => {
        const wp = bySeq.get(seq);
        if (!wp) throw new CliError('not_found', `--wp: work package ${seq} of ${slug} does not exist`, { field: 'wp' });
        return wp;
      }),
    ];
  }
  const bySeq = new Map(all.map((w) => [w.sequence, w]));
  // Wave by wave; packages already in REVIEW or DONE have nothing for an agent to do.
  return (await rt.workflow.waves(slug))
    .map((wave) => wave.map((seq) => bySeq.get(seq)!).filter((w) => w.state !== 'DONE' && w.state !== 'REVIEW'))
    .filter((wave) => wave.length > 0);
}

/**
 * With a code host, the review loop reads the CI of each package's branch pushed to a remote
 * (`ci.remote`, else `origin`): without that remote every job would run its agent and then end on
 * the host's 404 for a commit it never received. Refused before anything moves, saying what to add.
 */
async function checkCiRemote(rt: Runtime): Promise<void> {
  if (!rt.config.code_host) return;
  const host = resolved(rt.config.code_host);
  const remotes = (await rt.git.run(['remote'])).split('\n').filter(Boolean);
  const url = `${githubWebUrl(host)}/${host.owner}/${host.repo}.git`;
  const has = remotes.length ? `it has ${remotes.join(', ')}` : 'it has none';
  const named = rt.config.ci?.remote;
  if (named !== undefined && !remotes.includes(named))
    throw new CliError(
      'invalid_argument',
      `ci.remote names the remote ${named}, which this repository does not have (${has}): add it (git remote add ${named} ${url}) or set ci.remote to one it has`,
      { field: 'config.ci.remote', fix: `git remote add ${named} ${url}` },
    );
  if (named === undefined && !remotes.includes('origin'))
    throw new CliError(
      'invalid_argument',
      `code_host (${host.owner}/${host.repo}) runs CI on each work package's branch pushed to the repository's remote, and this repository has no origin (${has}): add it (git remote add origin ${url}), set ci.remote to the remote to push to, or remove code_host to run the local checks (ci.checks) instead`,
      { field: 'config.ci.remote', fix: `git remote add origin ${url}` },
    );
}

/** `yard implement <slug>`. Exit 0 when every job completed, 1 when any failed or was cancelled. */
export function implementCommand(ctx: CommandContext, slug: string, opts: ImplementOptions) {
  return withRuntime(ctx, async (rt) => {
    const parallel = intOption(opts.parallel, '--parallel', { min: 1, max: 32 })!;
    const cycles = intOption(opts.maxReviewCycles, '--max-review-cycles', { min: 1, max: 20 });
    const timeout = intOption(opts.timeout, '--timeout', { min: 1000 });
    const wanted = opts.wp.map((w) => intOption(w, '--wp', { min: 1 })!);
    const say = (line: string) => ctx.globals.output !== 'json' && ctx.io.stderr(`${line}\n`);
    const dispatcher = rt.dispatcher({
      ...(opts.agent !== undefined ? { kind: opts.agent } : {}),
      ...(opts.agentType !== undefined
        ? {
            agentType: opts.agentType,
            onAgentServer: ({ url, agentType, command, cwd }) =>
              say(`[${slug}] ${command} (type ${agentType}) behind the agent session server at ${url}, in ${cwd}`),
          }
        : {}),
      ...(opts.agentCommand !== undefined ? { command: opts.agentCommand } : {}),
      ...(opts.agentArg.length ? { args: opts.agentArg } : {}),
      ...(opts.agentUrl !== undefined ? { url: opts.agentUrl } : {}),
      ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
    });
    await checkCiRemote(rt);
    const feature = await rt.workflow.getFeature(slug);
    // A job whose process was killed would hold its package forever ("already has job"); jobs live processes run stay.
    for (const job of await dispatcher.recoverInterrupted())
      say(`[${job.feature_slug} wp${job.wp_sequence}] job ${job.id} failed: ${job.error ?? 'the process running it stopped'}`);
    if (feature.state !== 'IMPLEMENTING') {
      const moved = await rt.workflow.advance(slug, 'implement', { actor: rt.actor });
      say(`${slug}: ${moved.from} -> ${moved.to}`);
    }
    const waves = await choosePackages(rt, slug, wanted);
    if (waves.length === 0) say(`${slug}: no work package needs an agent`);
    const onEvent = (event: AgentEvent) => {
      if (event.featureSlug !== slug) return;
      const line = progressLine(event, ctx.globals.verbose);
      if (line) say(line);
    };
    rt.events.on('workflow:agent_event', onEvent);
    // `yard jobs cancel` in another process marks the job Cancelled in the store; stop its agent here.
    const watch = watchCancellations(rt.store, dispatcher, rt.events);
    let stopped = false;
    void ctx.io.stopSignal?.then(() => {
      stopped = true;
      say('yard: stopping: cancelling running jobs');
      for (const id of watch.running) void dispatcher.cancel(id);
    });
    const results: { wp_sequence: number; job: AgentJob | null; error: { code: string; message: string } | null }[] = [];
    try {
      for (const wave of waves) {
        const queue = [...wave];
        const worker = async () => {
          for (let wp = queue.shift(); wp && !stopped; wp = queue.shift()) {
            try {
              const job = await dispatcher.dispatch(slug, wp.sequence, cycles !== undefined ? { review_cycles: cycles } : {});
              say(`[${slug} wp${wp.sequence}] job ${job.id} started`);
              const done = await dispatcher.wait(job.id);
              results.push({ wp_sequence: wp.sequence, job: done, error: null });
            } catch (error) {
              const e = error as { code?: string; message?: string };
              say(`[${slug} wp${wp.sequence}] not started: ${e.message}`);
              results.push({ wp_sequence: wp.sequence, job: null, error: { code: e.code ?? 'internal', message: String(e.message) } });
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(parallel, wave.length) }, worker));
        if (stopped) break;
      }
    } finally {
      watch.stop();
      rt.events.off('workflow:agent_event', onEvent);
    }
    results.sort((a, b) => a.wp_sequence - b.wp_sequence);
    const summary = results.map((r) => ({
      wp_sequence: r.wp_sequence,
      job_id: r.job?.id ?? null,
      state: r.job?.state ?? 'NotStarted',
      outcome: r.job?.outcome ?? r.error?.code ?? null,
      review_cycles: r.job?.review_cycles ?? 0,
      pr_url: r.job?.result?.pr_url ?? null,
      error: r.job?.error ?? r.error?.message ?? null,
    }));
    if (ctx.globals.output === 'json') emit(ctx.io, 'json', { feature_slug: slug, jobs: summary });
    else emit(ctx.io, ctx.globals.output, summary);
    return summary.every((s) => s.state === 'Completed') ? 0 : 1;
  });
}
