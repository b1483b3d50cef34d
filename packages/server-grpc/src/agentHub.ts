/**
 * @module agentHub
 * Remote agents as an `AgentAdapter` (kind `remote`). Agents register and
 * open sessions through gRPC's AgentService; when the review loop runs a
 * task, the hub hands it to an idle session as a prompt, feeds the output
 * the agent reports to the loop, and resolves with the result the agent
 * completes it with. A session that misses three heartbeat intervals ends,
 * and its running task fails. An agent left with no session for as long
 * (its sessions ended or expired, or it never started one) is forgotten and
 * must register again, so agents that come and go hold no memory. Cancellation
 * and timeouts send the agent a `cancel` prompt.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  type AgentAdapter,
  type AgentConfig,
  type AgentResult,
  type AgentRunHooks,
  type AgentTask,
  type Clock,
  InvalidArgumentError,
  NotFoundError,
  reportedPrUrl,
  WorkflowError,
} from '@switchyard/workflow';
import { GitRepository } from '@switchyard/workflow/git';
import type { Prompt__Output } from './generated/switchyard/workflow/v1/Prompt.js';

/** A prompt as the hub delivers it: the wire `Prompt`, `task` to work or `cancel` to stop. */
export type HubPrompt = Prompt__Output & { kind: 'task' | 'cancel' };

interface Agent {
  id: string;
  name: string;
  agentType: string;
  capabilities: string[];
  /** When the agent last showed life with no session open: registration, or the end of its last session. */
  lastSeen: number;
}

interface RunningTask {
  id: string;
  output: string;
  hooks: AgentRunHooks;
  startHead: string;
  worktree: string;
  settle: (result: { exit_code: number; pr_url: string | null } | Error) => void;
}

interface Session {
  id: string;
  agent: Agent;
  startedAt: number;
  lastSeen: number;
  task: RunningTask | undefined;
  /** The task prompt in flight, re-sent to a prompt stream that (re)connects. */
  queued: HubPrompt | undefined;
  prompts: EventEmitter;
}

/**
 * The task of a session reserved for a job whose prompt is not out yet (the worktree's HEAD is being
 * read). The session is busy, but there is no task an agent could name: it has no id to report on.
 */
const CLAIMED: RunningTask = { id: '', output: '', hooks: undefined as never, startHead: '', worktree: '', settle: () => undefined };

/** Options of {@link AgentHub}. */
export interface AgentHubOptions {
  clock?: Clock;
  /**
   * How often agents must send a heartbeat (default 10 s); three missed intervals end a session, and an
   * agent with no session for three intervals is forgotten.
   */
  heartbeatIntervalMs?: number;
  /** How often expired sessions are swept (default: the heartbeat interval). */
  sweepIntervalMs?: number;
  /** Output kept per task (default 1 MiB, the tail). */
  maxOutputBytes?: number;
}

/**
 * @example
 * ```ts
 * const hub = new AgentHub();
 * const dispatcher = new AgentDispatcher({ workflow, git, reviewer, adapters: [hub] });
 * await startGrpcServer({ workflow, agentHub: hub, port: 50051 });
 * ```
 */
export class AgentHub implements AgentAdapter {
  readonly kind = 'remote';
  readonly heartbeatIntervalMs: number;
  private readonly clock: Clock;
  private readonly agents = new Map<string, Agent>();
  private readonly sessions = new Map<string, Session>();
  private readonly idle = new EventEmitter();
  private readonly sweeper: NodeJS.Timeout;
  private readonly maxOutput: number;

  constructor(options: AgentHubOptions = {}) {
    this.clock = options.clock ?? { now: () => Date.now() };
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 10_000;
    this.maxOutput = options.maxOutputBytes ?? 1024 * 1024;
    this.idle.setMaxListeners(0);
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? this.heartbeatIntervalMs);
    this.sweeper.unref();
  }

  registerAgent(input: { name: string; agent_type: string; capabilities: string[] }): { agent_id: string } {
    if (!input.name || input.name.length > 200 || /[\r\n\0]/.test(input.name))
      throw new InvalidArgumentError('name', 'one line of 1-200 characters');
    this.sweep();
    const agent: Agent = {
      id: randomUUID(),
      name: input.name,
      agentType: input.agent_type,
      capabilities: input.capabilities,
      lastSeen: this.clock.now(),
    };
    this.agents.set(agent.id, agent);
    return { agent_id: agent.id };
  }

  startSession(agentId: string): { session_id: string; agent_id: string; heartbeat_interval_ms: number; started_at: string } {
    this.sweep();
    const agent = this.agents.get(agentId);
    if (!agent) throw new NotFoundError('agent', agentId);
    const now = this.clock.now();
    const session: Session = {
      id: randomUUID(),
      agent,
      startedAt: now,
      lastSeen: now,
      task: undefined,
      queued: undefined,
      prompts: new EventEmitter(),
    };
    this.sessions.set(session.id, session);
    this.idle.emit('idle');
    return {
      session_id: session.id,
      agent_id: agent.id,
      heartbeat_interval_ms: this.heartbeatIntervalMs,
      started_at: new Date(now).toISOString(),
    };
  }

  heartbeat(sessionId: string): { state: 'idle' | 'busy'; task_id?: string } {
    const session = this.session(sessionId);
    session.lastSeen = this.clock.now();
    if (!session.task) return { state: 'idle' };
    return session.task === CLAIMED ? { state: 'busy' } : { state: 'busy', task_id: session.task.id };
  }

  /** Subscribes to a session's prompts; returns the unsubscribe function. A task already assigned is sent at once. */
  receivePrompts(sessionId: string, send: (prompt: HubPrompt) => void, onEnd: () => void): () => void {
    const session = this.session(sessionId);
    session.prompts.on('prompt', send);
    session.prompts.once('end', onEnd);
    const pending = session.prompts.listenerCount('prompt') === 1 ? session.queued : undefined;
    if (pending) send(pending);
    // A session is claimable only once something hears its prompts (claimIdle), and StartSession's 'idle' came
    // before that: a job already waiting would otherwise wait out its timeout for a session that is free.
    if (!session.task) this.idle.emit('idle');
    return () => {
      session.prompts.off('prompt', send);
      session.prompts.off('end', onEnd);
    };
  }

  reportOutput(sessionId: string, taskId: string, chunk: string): void {
    const task = this.taskOf(sessionId, taskId);
    task.output = (task.output + chunk).slice(-this.maxOutput);
    task.hooks.onOutput(chunk);
  }

  completeTask(sessionId: string, taskId: string, result: { exit_code: number; pr_url: string }): void {
    const task = this.taskOf(sessionId, taskId);
    task.settle({ exit_code: result.exit_code, pr_url: result.pr_url || null });
  }

  endSession(sessionId: string, reason: string): void {
    const session = this.session(sessionId);
    // Ending a session is a sign of life: the agent keeps its grace period to start another.
    session.lastSeen = this.clock.now();
    this.drop(session, `the agent ended its session${reason ? `: ${reason}` : ''}`);
  }

  /** Live sessions (for status pages and tests). */
  listSessions(): { session_id: string; agent_id: string; name: string; state: 'idle' | 'busy' }[] {
    return [...this.sessions.values()].map((s) => ({
      session_id: s.id,
      agent_id: s.agent.id,
      name: s.agent.name,
      state: s.task ? 'busy' : 'idle',
    }));
  }

  /** Registered agents, with the number of live sessions each has (for status pages and tests). */
  listAgents(): { agent_id: string; name: string; agent_type: string; sessions: number }[] {
    const sessions = [...this.sessions.values()];
    return [...this.agents.values()].map((a) => ({
      agent_id: a.id,
      name: a.name,
      agent_type: a.agentType,
      sessions: sessions.filter((s) => s.agent === a).length,
    }));
  }

  /** The `AgentAdapter` side: waits (up to the timeout) for an idle session and runs the task there. */
  async run(task: AgentTask, config: AgentConfig, hooks: AgentRunHooks): Promise<AgentResult> {
    const deadline = this.clock.now() + config.timeout_ms;
    const session = await this.claimIdle(hooks.signal, config.timeout_ms);
    const git = new GitRepository(task.worktree);
    let startHead: string;
    try {
      startHead = (await git.run(['rev-parse', 'HEAD'], { cwd: task.worktree })).trim();
      // An abort signal fires once: a job cancelled while HEAD was read would never hear it below.
      if (hooks.signal.aborted) throw new WorkflowError('cancelled', 'the job was cancelled');
    } catch (error) {
      session.task = undefined;
      this.idle.emit('idle');
      throw error;
    }
    const id = randomUUID();
    const prompt: HubPrompt = {
      task_id: id,
      kind: 'task',
      feature_slug: task.feature_slug,
      wp_sequence: task.work_package.sequence,
      attempt: task.attempt,
      prompt: task.prompt,
      context: task.context,
      worktree: task.worktree,
      timeout_ms: Math.max(0, deadline - this.clock.now()),
    };
    const running: RunningTask = { id, output: '', hooks, startHead, worktree: task.worktree, settle: () => undefined };
    const outcome = await new Promise<{ exit_code: number; pr_url: string | null } | Error>((resolve) => {
      const timer = setTimeout(
        () => finish(new WorkflowError('timeout', `the remote agent did not finish within ${config.timeout_ms} ms`)),
        prompt.timeout_ms,
      );
      const onAbort = () => finish(new WorkflowError('cancelled', 'the job was cancelled'));
      const finish = (result: { exit_code: number; pr_url: string | null } | Error) => {
        clearTimeout(timer);
        hooks.signal.removeEventListener('abort', onAbort);
        if (session.task?.id === id) {
          if (result instanceof Error) session.prompts.emit('prompt', { ...prompt, kind: 'cancel' });
          session.task = undefined;
          session.queued = undefined;
          if (this.sessions.has(session.id)) this.idle.emit('idle');
        }
        resolve(result);
      };
      running.settle = finish;
      session.task = running;
      hooks.signal.addEventListener('abort', onAbort, { once: true });
      session.queued = prompt;
      session.prompts.emit('prompt', prompt);
    });
    const output = running.output;
    if (outcome instanceof Error) throw outcome;
    const commits = await git.commitsBetween(startHead, 'HEAD', task.worktree).catch(() => []);
    return { exit_code: outcome.exit_code, commits, pr_url: outcome.pr_url ?? reportedPrUrl(output), output };
  }

  /** Stops the sweeper, ends every session and forgets every agent. */
  close(): void {
    clearInterval(this.sweeper);
    for (const session of [...this.sessions.values()]) this.drop(session, 'the server is shutting down');
    this.agents.clear();
  }

  private claimIdle(signal: AbortSignal, timeoutMs: number): Promise<Session> {
    return new Promise((resolve, reject) => {
      const tryClaim = () => {
        this.sweep();
        const session = [...this.sessions.values()].find((s) => !s.task && s.prompts.listenerCount('prompt') > 0);
        if (!session) return false;
        // Reserve it before anything awaits, so two jobs never share a session.
        session.task = CLAIMED;
        cleanup();
        resolve(session);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new WorkflowError('timeout', `no remote agent session became free within ${timeoutMs} ms`));
      }, timeoutMs);
      const onAbort = () => {
        cleanup();
        reject(new WorkflowError('cancelled', 'the job was cancelled'));
      };
      const cleanup = () => {
        clearTimeout(timer);
        this.idle.off('idle', onIdle);
        signal.removeEventListener('abort', onAbort);
      };
      const onIdle = () => void tryClaim();
      signal.addEventListener('abort', onAbort, { once: true });
      this.idle.on('idle', onIdle);
      tryClaim();
    });
  }

  private session(sessionId: string): Session {
    this.sweep();
    const session = this.sessions.get(sessionId);
    if (!session) throw new NotFoundError('session', sessionId);
    return session;
  }

  private taskOf(sessionId: string, taskId: string): RunningTask {
    const session = this.session(sessionId);
    session.lastSeen = this.clock.now();
    if (!session.task || session.task === CLAIMED || session.task.id !== taskId) throw new NotFoundError('task', taskId);
    return session.task;
  }

  private drop(session: Session, reason: string): void {
    this.sessions.delete(session.id);
    // The agent's grace period runs from its last sign of life, not from the sweep that noticed it was gone.
    session.agent.lastSeen = Math.max(session.agent.lastSeen, session.lastSeen);
    session.task?.settle(new WorkflowError('upstream_failed', `remote agent ${session.agent.name}: ${reason}`));
    session.prompts.emit('end');
    session.prompts.removeAllListeners();
  }

  private sweep(): void {
    const limit = this.clock.now() - 3 * this.heartbeatIntervalMs;
    for (const session of [...this.sessions.values()]) if (session.lastSeen < limit) this.drop(session, 'missed its heartbeats');
    const withSessions = new Set([...this.sessions.values()].map((s) => s.agent.id));
    for (const agent of [...this.agents.values()]) if (!withSessions.has(agent.id) && agent.lastSeen < limit) this.agents.delete(agent.id);
  }
}
