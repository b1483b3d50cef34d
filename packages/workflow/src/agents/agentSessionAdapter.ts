/**
 * @module agentSessionAdapter
 * Drives an agent through the agent session server's HTTP API: `GET
 * /status`, `POST /message {content, type}`, `GET /events` (SSE:
 * `message_update`, `status_change`) and `GET /messages`. It waits for the
 * agent to be idle (`stable`), sends the prompt, streams the agent's
 * messages, and returns once the agent is idle again. An agent whose process
 * ends meanwhile (`exited` in the status) ends the job with its exit code.
 */
import { request } from 'undici';
import type { AgentResult } from '../domain/records.js';
import { WorkflowError } from '../errors.js';
import { abortableSleep } from '../util/abortableSleep.js';
import {
  type AgentAdapter,
  type AgentConfig,
  type AgentRunHooks,
  type AgentTask,
  commitsSince,
  headOf,
  reportedPrUrl,
} from './agentAdapter.js';
import { readSseEvents } from './sseEvents.js';

/** Options of {@link AgentSessionAdapter}. */
export interface AgentSessionOptions {
  /** The session server, e.g. `http://127.0.0.1:3284` (operator configuration). */
  baseUrl: string;
  apiKey?: string;
  /** How often to poll `/status` while waiting for the agent to be idle (default 500 ms). */
  pollIntervalMs?: number;
  /** The most characters one `/events` event may take (default 1 Mi); a longer one fails the job as `upstream_failed`. */
  maxEventChars?: number;
}

/** `exited` of `/status` and of `status_change` frames: the agent process has ended and takes no more messages. */
interface Exited {
  exit_code: number | null;
  signal: string | number | null;
}

/** The exit code a job records for an agent that ended: its own, or 128 when a signal ended it (as the process adapter). */
const exitCodeOf = (exited: Exited): number => exited.exit_code ?? (exited.signal !== null ? 128 : 1);

interface SessionMessage {
  id: number;
  content: string;
  role: string;
}

/**
 * @example
 * ```ts
 * const agent = new AgentSessionAdapter({ baseUrl: 'http://127.0.0.1:3284' });
 * ```
 */
export class AgentSessionAdapter implements AgentAdapter {
  readonly kind = 'agent-session';
  private readonly base: URL;

  constructor(private readonly options: AgentSessionOptions) {
    this.base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  }

  private async call(method: 'GET' | 'POST', path: string, signal: AbortSignal, body?: unknown): Promise<unknown> {
    const response = await request(new URL(path, this.base), {
      method,
      signal,
      headers: {
        accept: 'application/json',
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300)
      throw new WorkflowError('upstream_failed', `agent session ${method} /${path} answered ${response.statusCode}: ${text.slice(0, 200)}`);
    return text ? JSON.parse(text) : undefined;
  }

  private async status(signal: AbortSignal): Promise<{ status: string; exited: Exited | undefined }> {
    const answer = (await this.call('GET', 'status', signal)) as { status?: unknown; exited?: Exited };
    return { status: String(answer.status ?? ''), exited: answer.exited };
  }

  private async messages(signal: AbortSignal): Promise<SessionMessage[]> {
    return ((await this.call('GET', 'messages', signal)) as { messages?: SessionMessage[] }).messages ?? [];
  }

  async run(task: AgentTask, config: AgentConfig, hooks: AgentRunHooks): Promise<AgentResult> {
    const timeout = AbortSignal.timeout(config.timeout_ms);
    const signal = AbortSignal.any([hooks.signal, timeout]);
    const fail = (error: unknown): never => {
      if (hooks.signal.aborted) throw new WorkflowError('cancelled', 'the job was cancelled', { cause: error });
      if (timeout.aborted)
        throw new WorkflowError('timeout', `the agent session did not finish within ${config.timeout_ms} ms`, { cause: error });
      if (error instanceof WorkflowError) throw error;
      throw new WorkflowError('upstream_failed', `agent session ${this.base.origin}: ${(error as Error).message}`, { cause: error });
    };
    try {
      const start = await headOf(task.worktree);
      for (;;) {
        const { status, exited } = await this.status(signal);
        // A dead agent reads stable for good: sending it the task would wait for a reply that never comes.
        if (exited) {
          throw new WorkflowError('upstream_failed', `the agent at ${this.base.origin} has exited (${describeExit(exited)}); restart it`);
        }
        if (status === 'stable') break;
        await abortableSleep(this.options.pollIntervalMs ?? 500, signal);
      }
      const before = await this.messages(signal);
      const lastId = before.length > 0 ? Math.max(...before.map((m) => m.id)) : -1;
      const events = await request(new URL('events', this.base), {
        method: 'GET',
        signal,
        headers: { accept: 'text/event-stream', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
      });
      if (events.statusCode >= 300) throw new WorkflowError('upstream_failed', `agent session /events answered ${events.statusCode}`);
      await this.call('POST', 'message', signal, { content: `${task.context ? `${task.context}\n\n` : ''}${task.prompt}`, type: 'user' });
      const seen = new Map<number, string>();
      let running = false;
      let exited: Exited | undefined;
      try {
        for await (const frame of readSseEvents(events.body, {
          source: `agent session ${this.base.origin}/events`,
          ...(this.options.maxEventChars !== undefined ? { maxEventChars: this.options.maxEventChars } : {}),
        })) {
          const event = frame.event ?? 'message';
          if (!frame.data) continue;
          const payload = JSON.parse(frame.data) as { id?: number; message?: string; role?: string; status?: string; exited?: Exited };
          if (event === 'message_update' && payload.role === 'agent' && typeof payload.id === 'number' && payload.id > lastId) {
            // Updates carry the whole message so far; stream only what is new.
            const previous = seen.get(payload.id) ?? '';
            const text = payload.message ?? '';
            hooks.onOutput(text.startsWith(previous) ? text.slice(previous.length) : text);
            seen.set(payload.id, text);
          } else if (event === 'status_change') {
            if (payload.exited) {
              // The agent died (mid-task, or before it took the prompt): its exit is the job's.
              exited = payload.exited;
              break;
            }
            if (payload.status === 'running') running = true;
            else if (payload.status === 'stable' && (running || seen.size > 0)) break;
          }
        }
      } finally {
        events.body.destroy();
      }
      const after = (await this.messages(signal)).filter((m) => m.role === 'agent' && m.id > lastId);
      const output = after.map((m) => m.content).join('\n');
      const exitCode = exited ? exitCodeOf(exited) : 0;
      return { exit_code: exitCode, commits: await commitsSince(task.worktree, start), pr_url: reportedPrUrl(output), output };
    } catch (error) {
      return fail(error);
    }
  }
}

function describeExit(exited: Exited): string {
  return exited.exit_code !== null ? `code ${exited.exit_code}` : `signal ${exited.signal ?? 'unknown'}`;
}
