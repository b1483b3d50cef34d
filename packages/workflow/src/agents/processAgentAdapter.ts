/**
 * @module processAgentAdapter
 * Runs a local agent command (for example a coding CLI) in the work
 * package's worktree: the prompt on stdin, output captured and streamed.
 * Spawned with an argument array, never a shell, as the leader of a
 * process group of its own: on timeout or cancellation the whole group is
 * stopped (TERM, then KILL), so the processes a wrapper started go with it,
 * and whatever the agent left running when it exited is stopped too.
 */
import { spawn } from 'node:child_process';
import type { AgentResult } from '../domain/records.js';
import { WorkflowError } from '../errors.js';
import { assertSafeArgument } from '../git/safety.js';
import {
  type AgentAdapter,
  type AgentConfig,
  type AgentRunHooks,
  type AgentTask,
  commitsSince,
  headOf,
  OutputBuffer,
  reportedPrUrl,
} from './agentAdapter.js';
import { describeProcessGroup, stopProcessGroup, trackProcessGroup } from './processGroup.js';

/** Options of {@link ProcessAgentAdapter}. */
export interface ProcessAgentOptions {
  /** The executable (looked up on PATH). */
  command: string;
  args?: string[];
  /**
   * The environment the agent starts from (default `process.env`). A caller that was given an
   * environment of its own (the `yard` CLI's) passes it here; nothing else of `process.env` reaches
   * the agent then.
   */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** Extra environment, over `baseEnv`; the task's ids are added as `SWITCHYARD_FEATURE_SLUG` and `SWITCHYARD_WP_SEQUENCE`. */
  env?: Record<string, string>;
  /** Output kept for the result (default 1 MiB, the tail). */
  maxOutputBytes?: number;
  /** Grace between TERM and KILL of the agent's process group (default 5 s). */
  killGraceMs?: number;
}

/**
 * @example
 * ```ts
 * const agent = new ProcessAgentAdapter({ command: 'my-agent', args: ['--non-interactive'] });
 * ```
 */
export class ProcessAgentAdapter implements AgentAdapter {
  readonly kind = 'process';

  constructor(private readonly options: ProcessAgentOptions) {
    assertSafeArgument(options.command, 'command');
  }

  async run(task: AgentTask, config: AgentConfig, hooks: AgentRunHooks): Promise<AgentResult> {
    const start = await headOf(task.worktree);
    const output = new OutputBuffer(this.options.maxOutputBytes);
    const graceMs = this.options.killGraceMs ?? 5000;
    const exitCode = await new Promise<number>((resolve, reject) => {
      const child = spawn(this.options.command, this.options.args ?? [], {
        cwd: task.worktree,
        env: {
          ...(this.options.baseEnv ?? process.env),
          ...this.options.env,
          SWITCHYARD_FEATURE_SLUG: task.feature_slug,
          SWITCHYARD_WP_SEQUENCE: String(task.work_package.sequence),
        },
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        // Its own process group (led by child.pid), so a stop reaches the processes it starts.
        detached: true,
      });
      const untrack = child.pid !== undefined ? trackProcessGroup(child.pid) : () => undefined;
      if (child.pid !== undefined && hooks.onProcessStarted) {
        const started = hooks.onProcessStarted.bind(hooks);
        void describeProcessGroup(child.pid).then((group) => group && started(group));
      }
      let ended: 'timeout' | 'cancelled' | undefined;
      let stopping: Promise<void> | undefined;
      const stopGroup = () => {
        if (child.pid !== undefined) stopping ??= stopProcessGroup(child.pid, graceMs);
        return stopping ?? Promise.resolve();
      };
      const stop = (why: 'timeout' | 'cancelled') => {
        ended ??= why;
        void stopGroup();
      };
      const timer = setTimeout(() => stop('timeout'), config.timeout_ms);
      const onAbort = () => stop('cancelled');
      hooks.signal.addEventListener('abort', onAbort, { once: true });
      const collect = (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        output.append(text);
        hooks.onOutput(text);
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      // An agent that never reads stdin must not crash us with EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(`${task.context ? `${task.context}\n\n` : ''}${task.prompt}\n`);
      child.on('error', (error) => {
        untrack();
        clearTimeout(timer);
        hooks.signal.removeEventListener('abort', onAbort);
        reject(new WorkflowError('upstream_failed', `agent command ${this.options.command}: ${error.message}`, { cause: error }));
      });
      // The agent itself is done: whatever it started and left running goes too (their pipes may hold 'close' back).
      child.on('exit', () => void stopGroup());
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        hooks.signal.removeEventListener('abort', onAbort);
        // The job ends only when nothing of the agent's group runs any more.
        void stopGroup().then(() => {
          untrack();
          if (ended === 'timeout')
            reject(new WorkflowError('timeout', `the agent ran longer than ${config.timeout_ms} ms and was stopped`));
          else if (ended === 'cancelled') reject(new WorkflowError('cancelled', 'the job was cancelled'));
          else resolve(code ?? (signal ? 128 : 1));
        });
      });
    });
    const text = output.toString();
    return { exit_code: exitCode, commits: await commitsSince(task.worktree, start), pr_url: reportedPrUrl(text), output: text };
  }
}
