/**
 * @module servedAgent
 * A served agent run in the work package's worktree: for each task,
 * `implement` starts the agent session server (`@switchyard/agent-session`)
 * with the agent command and the worktree as its working directory, on a
 * loopback port with a fresh API key, drives it through the workflow's
 * `AgentSessionAdapter`, and closes it. So the agent edits the files the
 * review loop reads its commits from, never its own directory.
 */
import { randomBytes } from 'node:crypto';
import type { AgentResult } from '@switchyard/workflow';
import {
  type AgentAdapter,
  type AgentConfig,
  type AgentRunHooks,
  AgentSessionAdapter,
  type AgentTask,
  WorkflowError,
} from '@switchyard/workflow';

/** Options of {@link ServedAgentAdapter}. */
export interface ServedAgentOptions {
  command: string;
  args?: string[];
  transport?: 'pty' | 'acp';
  /** How long the screen must stay unchanged for the agent to count as idle (the server's default otherwise). */
  stableWindowMs?: number;
  /** The agent's whole environment (the `yard` CLI's `io.env`); the server's `process.env` when not given. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * @example
 * ```ts
 * const agent = new ServedAgentAdapter({ command: 'claude' }); // one session server per task, in its worktree
 * ```
 */
export class ServedAgentAdapter implements AgentAdapter {
  readonly kind = 'agent-session';

  constructor(private readonly options: ServedAgentOptions) {}

  async run(task: AgentTask, config: AgentConfig, hooks: AgentRunHooks): Promise<AgentResult> {
    const { startAgentSessionServer } = await import('@switchyard/agent-session');
    // The server types into the agent: only this process may reach it.
    const apiKey = randomBytes(24).toString('base64url');
    let server: Awaited<ReturnType<typeof startAgentSessionServer>>;
    try {
      server = await startAgentSessionServer({
        host: '127.0.0.1',
        port: 0,
        command: this.options.command,
        args: this.options.args ?? [],
        cwd: task.worktree,
        transport: this.options.transport ?? 'pty',
        apiKey,
        ...(this.options.stableWindowMs !== undefined ? { stableWindowMs: this.options.stableWindowMs } : {}),
        ...(this.options.env ? { env: { ...this.options.env } } : {}),
        onWarning: () => undefined,
      });
    } catch (error) {
      throw new WorkflowError(
        'upstream_failed',
        `could not start the agent session server for ${this.options.command}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    try {
      return await new AgentSessionAdapter({ baseUrl: server.url, apiKey, pollIntervalMs: 100 }).run(task, config, hooks);
    } finally {
      await server.close();
    }
  }
}
