/**
 * @module agentAdapter
 * The `AgentAdapter` port: something that takes a work package's task (the
 * package, its context and a prompt) and works on it in the package's
 * worktree. Adapters: `process` (a local agent command), `agent-session`
 * (the agent session server over HTTP) and `mock` (tests).
 */
import type { WorkPackage } from '../domain/model.js';
import type { AgentProcessRecord, AgentResult } from '../domain/records.js';
import { WorkflowError } from '../errors.js';
import { GitRepository } from '../git/gitRepository.js';

/** What an agent works on: a work package + context + prompt. */
export interface AgentTask {
  feature_slug: string;
  work_package: WorkPackage;
  /** Background: the feature's description, contracts, earlier review feedback. */
  context: string;
  prompt: string;
  /** The worktree the agent works in. */
  worktree: string;
  /** 1 for the first run, then one more per review cycle. */
  attempt: number;
}

/** How to run agents: which adapter, how long, how many review cycles. */
export interface AgentConfig {
  kind: string;
  timeout_ms: number;
  review_cycles: number;
}

/** Callbacks an adapter reports through. */
export interface AgentRunHooks {
  signal: AbortSignal;
  /** Agent output as it arrives (for streaming). */
  onOutput(chunk: string): void;
  /** A local agent process started, leading a process group of its own: the job records it (see `processGroup`). */
  onProcessStarted?(group: AgentProcessRecord): void;
}

/** The port. */
export interface AgentAdapter {
  readonly kind: string;
  run(task: AgentTask, config: AgentConfig, hooks: AgentRunHooks): Promise<AgentResult>;
}

/** A pull-request URL an agent reported with a `PR_URL=<url>` line, if any. */
export function reportedPrUrl(output: string): string | null {
  const matches = [...output.matchAll(/^PR_URL=(https?:\/\/\S+)\s*$/gm)];
  return matches.length > 0 ? matches[matches.length - 1]![1]! : null;
}

/** Commit ids the agent added in the worktree since `startHead`, oldest first. */
export async function commitsSince(worktree: string, startHead: string): Promise<string[]> {
  return new GitRepository(worktree).commitsBetween(startHead, 'HEAD', worktree);
}

/** The worktree's HEAD commit. */
export async function headOf(worktree: string): Promise<string> {
  return (await new GitRepository(worktree).run(['rev-parse', 'HEAD'], { cwd: worktree })).trim();
}

/** Keeps the last `limit` bytes of output. */
export class OutputBuffer {
  private text = '';
  constructor(private readonly limit = 1024 * 1024) {}
  append(chunk: string): void {
    this.text += chunk;
    if (this.text.length > this.limit) this.text = this.text.slice(this.text.length - this.limit);
  }
  toString(): string {
    return this.text;
  }
}

/**
 * The scripted adapter for tests: each run calls `script`, which may edit
 * and commit in the worktree, and returns the exit code and output.
 *
 * @example
 * ```ts
 * const agent = new MockAgentAdapter(async (task) => ({ exit_code: 0, output: `done ${task.attempt}` }));
 * ```
 */
export class MockAgentAdapter implements AgentAdapter {
  readonly kind = 'mock';
  readonly tasks: AgentTask[] = [];

  constructor(private readonly script: (task: AgentTask) => Promise<{ exit_code: number; output?: string; pr_url?: string | null }>) {}

  async run(task: AgentTask, _config: AgentConfig, hooks: AgentRunHooks): Promise<AgentResult> {
    this.tasks.push(task);
    if (hooks.signal.aborted) throw new WorkflowError('cancelled', 'the job was cancelled');
    const start = await headOf(task.worktree);
    const outcome = await this.script(task);
    if (outcome.output) hooks.onOutput(outcome.output);
    return {
      exit_code: outcome.exit_code,
      commits: await commitsSince(task.worktree, start),
      pr_url: outcome.pr_url ?? reportedPrUrl(outcome.output ?? ''),
      output: outcome.output ?? '',
    };
  }
}
