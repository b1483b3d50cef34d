/**
 * @module activity
 * What an agent does besides writing messages, as the Agent Client Protocol
 * reports it: tool calls (with their status as they run), the plan of a
 * turn, and its thoughts; and the permission requests it makes, with how
 * each was settled. Transport-neutral records: the {@link Conversation}
 * keeps them beside the messages, `/events` sends them as typed events and
 * the chat page draws them between the messages.
 */

/** Where an activity sits in the conversation: after the message with this id (-1: before any). */
interface ActivityPlace {
  /** Stable id: the agent's tool call id, `plan-<turn>`, `thought-<n>`. */
  id: string;
  afterMessage: number;
  /** ISO 8601 time of the last change. */
  time: string;
}

/** A tool call and its progress. */
export interface ToolCallActivity extends ActivityPlace {
  type: 'tool_call';
  title: string;
  /** ACP tool kind: read, edit, delete, move, search, execute, think, fetch, switch_mode, other. */
  kind: string;
  /** pending, in_progress, completed or failed. */
  status: string;
  /** What the tool produced, as text (diffs and terminals are named, not inlined); capped. */
  content: string;
  /** Files the tool touches. */
  locations: string[];
}

/** The agent's plan for the turn; each update replaces it whole. */
export interface PlanActivity extends ActivityPlace {
  type: 'plan';
  entries: { content: string; priority: string; status: string }[];
}

/** A run of the agent's reasoning, streamed. */
export interface ThoughtActivity extends ActivityPlace {
  type: 'thought';
  text: string;
}

export type AgentActivity = ToolCallActivity | PlanActivity | ThoughtActivity;

/** A change to an activity, with its sequence number (what `/events` sends). */
export interface ActivityEvent {
  seq: number;
  activity: AgentActivity;
}

/**
 * How a permission request went.
 * - `requested`: it waits for the client's answer (shown as the dialog);
 * - `answered`: a client picked an option (`POST /dialog`);
 * - `granted` / `denied`: the policy (`allow` / `reject`) answered it;
 * - `timed_out`: nobody answered in time, so it was denied;
 * - `withdrawn`: the turn ended or was cancelled before an answer.
 */
export type PermissionOutcome = 'requested' | 'answered' | 'granted' | 'denied' | 'timed_out' | 'withdrawn';

/** One step of a permission request. */
export interface PermissionEvent {
  seq: number;
  outcome: PermissionOutcome;
  /** The tool call the agent asks to run. */
  toolCallId: string;
  title: string;
  /** The options' labels, as the dialog shows them. */
  options: string[];
  /** The label of the option chosen, when one was. */
  chosen?: string;
  time: string;
}

/** Longest tool output kept per tool call: the page and the events carry a summary, not a log. */
export const MAX_TOOL_CONTENT_CHARS = 4000;

/** Caps `text` at {@link MAX_TOOL_CONTENT_CHARS}, saying so. */
export function capToolContent(text: string): string {
  return text.length <= MAX_TOOL_CONTENT_CHARS ? text : `${text.slice(0, MAX_TOOL_CONTENT_CHARS)}\n… (cut)`;
}

/** An activity as a transport reports it; the conversation places and stamps it. */
export type ActivityUpdate = {
  [Type in AgentActivity['type']]: Omit<Extract<AgentActivity, { type: Type }>, 'afterMessage' | 'time'>;
}[AgentActivity['type']];
