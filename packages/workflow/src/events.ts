/**
 * @module events
 * Typed events (eventemitter3) the workflow emits. The observability
 * package and the servers subscribe; the domain never calls them. `at` is
 * epoch milliseconds from the injected clock.
 */
import { EventEmitter } from 'eventemitter3';
import type { JobState } from './domain/records.js';

/** One piece of agent activity, for streaming (`StreamAgentEvents`, SSE). */
export interface AgentEvent {
  jobId: string;
  featureSlug: string;
  wpSequence: number;
  /**
   * `status` (job state), `output` (agent output chunk), `review` (a verdict), `cycle` (a review cycle starts),
   * `transition`, `ci` (a local check starts or ends).
   */
  kind: 'status' | 'output' | 'review' | 'cycle' | 'transition' | 'ci';
  data: Record<string, unknown>;
  at: number;
  /**
   * The event's id in the workflow store (ascending, across processes), set once it is stored: a reader that
   * saw event N resumes after N (`StreamAgentEvents`' `after_event_id`).
   */
  id?: number;
}

/** An agent event as the store holds it. */
export type StoredAgentEvent = AgentEvent & { id: number };

/** Which stored agent events to read: after an id, of one job or feature, at most `limit` (oldest first). */
export interface AgentEventFilter {
  afterId?: number;
  jobId?: string;
  featureSlug?: string;
  limit?: number;
}

/** The event map. */
export interface WorkflowEvents {
  'workflow:transition': [{ featureSlug: string; wpSequence: number | null; from: string; to: string; actor: string; at: number }];
  'workflow:gate_failed': [{ featureSlug: string; wpSequence: number | null; transition: string; ruleIds: string[]; at: number }];
  'workflow:subcommand': [{ command: string; exitCode: number; durationMs: number; at: number }];
  'workflow:agent_job': [{ jobId: string; state: JobState; at: number }];
  'workflow:agent_event': [AgentEvent];
}

/**
 * The emitter shared by a workflow and its services.
 *
 * @example
 * ```ts
 * const events = new WorkflowEventEmitter();
 * events.on('workflow:transition', (e) => console.log(`${e.featureSlug}: ${e.from} -> ${e.to}`));
 * ```
 */
export class WorkflowEventEmitter extends EventEmitter<WorkflowEvents> {}
