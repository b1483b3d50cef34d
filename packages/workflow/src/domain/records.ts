/**
 * @module records
 * Records of the supporting services (backlog, agent jobs, sync links)
 * that the {@link WorkflowStore} persists next to features.
 */
import { z } from 'zod';

/** Triage classes. */
export const ITEM_TYPES = ['bug', 'feature', 'idea', 'task'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

/** Backlog statuses: `open` items are waiting, `pop` moves one to `in_progress`. */
export const BACKLOG_STATUSES = ['open', 'in_progress', 'done', 'dismissed'] as const;
export type BacklogStatus = (typeof BACKLOG_STATUSES)[number];

export const backlogItemSchema = z.object({
  id: z.number().int().positive(),
  title: z.string(),
  description: z.string(),
  type: z.enum(ITEM_TYPES),
  status: z.enum(BACKLOG_STATUSES),
  /** 0-100, higher first. */
  priority: z.number().int().min(0).max(100),
  confidence: z.number().min(0).max(1),
  /** Who classified it: the weighted classifier, the LLM, or a person. */
  source: z.enum(['heuristic', 'llm', 'manual']),
  feature_slug: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type BacklogItem = z.infer<typeof backlogItemSchema>;

/** Agent job states. */
export const JOB_STATES = ['Pending', 'Running', 'Completed', 'Failed', 'Cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** What an agent run produced. */
export interface AgentResult {
  exit_code: number;
  /** Commit ids the agent added, oldest first. */
  commits: string[];
  pr_url: string | null;
  /** Captured output (truncated to the configured limit). */
  output: string;
}

/** A process as a job records it: its PID and what tells it from a later process given the same PID. */
export interface AgentProcessRecord {
  pid: number;
  host: string;
  boot_id?: string;
  /** Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks from boot. */
  start_ticks?: number;
  pid_ns?: string;
}

export interface AgentJob {
  /** UUID v4. */
  id: string;
  feature_slug: string;
  wp_sequence: number;
  /** Adapter kind: `process`, `agent-session`, `mock` or a custom one. */
  kind: string;
  /** The process running the job (`<host>:<pid>:<start>`; see `JobOwner`); absent on jobs recorded before owners were. */
  owner?: string;
  /**
   * The agent command's process group, while a `process` agent runs: its leader's identity, so that the process
   * that recovers the job after a crash of the owner can stop what the agent left running (see `processGroup`).
   */
  agent_process?: AgentProcessRecord;
  state: JobState;
  review_cycles: number;
  max_review_cycles: number;
  /** How the job ended: `approved`, `exhausted`, `agent_failed`, `cancelled`, ... */
  outcome: string | null;
  result: AgentResult | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** Link between a local record and its copy in the tracker or on the code host. */
export interface SyncLink {
  system: 'tracker' | 'code_host';
  /** `feature:<slug>` or `wp:<slug>/<sequence>`. */
  local_key: string;
  remote_id: string;
  remote_url: string | null;
  /** Content hash of the local side when last in sync. */
  local_hash: string;
  /** Content hash of the remote side when last in sync. */
  remote_hash: string;
  updated_at: string;
}
