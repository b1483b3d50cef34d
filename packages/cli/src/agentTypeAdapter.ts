/**
 * @module agentTypeAdapter
 * `yard implement --agent-type codex`: each run starts the agent session
 * server (`@switchyard/agent-session`) over that agent's CLI, in the work
 * package's worktree, drives it through the workflow's `AgentSessionAdapter`
 * (the same HTTP API as `--agent agent-session --agent-url …`), and stops it
 * when the run ends. The server listens on loopback with a random key made
 * for the run, so nothing else on the machine can type into the agent.
 */
import { randomBytes } from 'node:crypto';
import { type AgentAdapter, type AgentConfig, type AgentRunHooks, AgentSessionAdapter, type AgentTask } from '@switchyard/workflow';

/** Options of {@link AgentTypeAdapter}. */
export interface AgentTypeAdapterOptions {
  agentType: string;
  command: string;
  args: readonly string[];
  /** The agent's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Told where each run's server is (for progress lines). */
  onServer?: (info: { url: string; agentType: string; command: string; cwd: string }) => void;
  /** How often the session adapter polls `/status` (default its own). */
  pollIntervalMs?: number;
}

/**
 * An agent of a known type run behind its own session server, one per run.
 *
 * @example
 * ```ts
 * const adapter = new AgentTypeAdapter({ agentType: 'codex', command: 'codex', args: [] });
 * ```
 */
export class AgentTypeAdapter implements AgentAdapter {
  readonly kind = 'agent-session';

  constructor(private readonly options: AgentTypeAdapterOptions) {}

  async run(task: AgentTask, config: AgentConfig, hooks: AgentRunHooks): ReturnType<AgentAdapter['run']> {
    // Loaded per run: the workflow's other commands never load the terminal machinery.
    const { startAgentSessionServer } = await import('@switchyard/agent-session');
    const apiKey = randomBytes(24).toString('base64url');
    const server = await startAgentSessionServer({
      command: this.options.command,
      args: [...this.options.args],
      agentType: this.options.agentType,
      cwd: task.worktree,
      ...(this.options.env ? { env: this.options.env } : {}),
      host: '127.0.0.1',
      port: 0,
      apiKey,
    });
    try {
      this.options.onServer?.({ url: server.url, agentType: server.session.agentType, command: this.options.command, cwd: task.worktree });
      const session = new AgentSessionAdapter({
        baseUrl: server.url,
        apiKey,
        ...(this.options.pollIntervalMs !== undefined ? { pollIntervalMs: this.options.pollIntervalMs } : {}),
      });
      return await session.run(task, config, hooks);
    } finally {
      await server.close();
    }
  }
}
