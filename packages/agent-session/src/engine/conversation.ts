/**
 * @module conversation
 * The transport-neutral record of one agent session: the messages, the
 * status and the errors, each change stamped with a sequence number and
 * announced as a typed event. Both transports (PTY and ACP) write into a
 * {@link Conversation}; the HTTP layer only reads it.
 *
 * Resuming a stream needs no event log: every message remembers the sequence
 * number of its last change, so "everything after N" is the messages changed
 * after N (in their current form), the errors after N, and the status if it
 * changed after N. That is exact however long a subscriber was away.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import type { ActivityEvent, ActivityUpdate, AgentActivity, PermissionEvent } from './activity.js';
import type { Dialog } from './rules/dialogs.js';

/** Who wrote a message. */
export type AgentRole = 'user' | 'agent';

/** `running` while the agent works or input is pending; `stable` when it waits for input. */
export type AgentStatus = 'stable' | 'running';

/** One message of the conversation. */
export interface AgentMessage {
  /** 0, 1, 2, … in conversation order. */
  id: number;
  role: AgentRole;
  content: string;
  /** ISO 8601 time of the message's last change. */
  time: string;
}

/** A message was added or its content changed (agent messages grow while the agent writes). */
export interface MessageUpdateEvent {
  seq: number;
  message: AgentMessage;
}

/** The status flipped, or the agent ended. */
export interface StatusChangeEvent {
  seq: number;
  status: AgentStatus;
  /** Set once the agent process has ended (see {@link Conversation.end}): it takes no more input. */
  exited?: AgentExit;
  /** Set while the agent shows a choice or confirmation (see {@link Conversation.setDialog}). */
  dialog?: Dialog;
}

/** Something went wrong on the agent's side (it exited, broke the protocol, a write failed). */
export interface AgentErrorEvent {
  seq: number;
  message: string;
  /** True when the agent can take no more input (it exited). */
  fatal: boolean;
  time: string;
}

/** How the agent process ended. */
export interface AgentExit {
  exitCode: number | null;
  signal: number | string | null;
}

/** `code 0`, `signal SIGTERM`. */
export function describeExit(exit: AgentExit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.exitCode}`;
}

/** Typed events of a conversation (and of every {@link AgentSession}). */
export interface ConversationEvents {
  message_update: (event: MessageUpdateEvent) => void;
  status_change: (event: StatusChangeEvent) => void;
  agent_error: (event: AgentErrorEvent) => void;
  /** A tool call, plan or thought was added or changed (ACP). */
  activity: (event: ActivityEvent) => void;
  /** A permission request was made or settled (ACP). */
  permission: (event: PermissionEvent) => void;
  exit: (exit: AgentExit) => void;
}

/** What changed after a sequence number (see {@link Conversation.changesSince}). */
export interface ConversationChanges {
  messages: MessageUpdateEvent[];
  errors: AgentErrorEvent[];
  activities: ActivityEvent[];
  permissions: PermissionEvent[];
  status: StatusChangeEvent | undefined;
}

const KEPT_ERRORS = 50;
/** Permission steps kept for resumes and replays (the newest). */
const KEPT_PERMISSIONS = 50;
/** Activities kept (the newest): a long session's tool calls must not grow without bound. */
const KEPT_ACTIVITIES = 500;

const copyDialog = (dialog: Dialog): Dialog => ({ text: dialog.text, options: [...dialog.options] });

/**
 * Messages, status and errors of one session, with sequence numbers.
 *
 * @example
 * ```ts
 * const conversation = new Conversation(systemClock);
 * conversation.on('message_update', ({ message }) => console.log(message.role, message.content));
 * conversation.addUser('hello');
 * conversation.updateAgent('hi there');
 * ```
 */
export class Conversation extends EventEmitter<ConversationEvents> {
  /** Random per session: a resume token from another session (or an older run) is recognised as foreign. */
  readonly epoch = randomBytes(4).toString('hex');
  private sequence = 0;
  private readonly entries: { message: AgentMessage; seq: number }[] = [];
  private current: StatusChangeEvent;
  private readonly errors: AgentErrorEvent[] = [];
  private readonly activityEntries: { activity: AgentActivity; seq: number }[] = [];
  private readonly permissionEvents: PermissionEvent[] = [];
  /** Entries before this index were restored from an earlier run: the agent's replies never update them. */
  private restoredCount = 0;

  constructor(
    private readonly clock: Clock,
    initialStatus: AgentStatus = 'running',
  ) {
    super();
    this.current = { seq: 0, status: initialStatus };
  }

  /** Sequence number of the latest change (0 before any). */
  get seq(): number {
    return this.sequence;
  }

  get status(): AgentStatus {
    return this.current.status;
  }

  /** Copies of every message, oldest first. */
  messages(): AgentMessage[] {
    return this.entries.map((entry) => ({ ...entry.message }));
  }

  /** The latest message of `role`, if any. */
  last(role?: AgentRole): AgentMessage | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const message = this.entries[i]!.message;
      if (!role || message.role === role) return { ...message };
    }
    return undefined;
  }

  /** How the agent ended, once {@link end} has been called. */
  get exited(): AgentExit | undefined {
    return this.current.exited;
  }

  /** The dialog the agent shows, if any. */
  get dialog(): Dialog | undefined {
    return this.current.dialog ? copyDialog(this.current.dialog) : undefined;
  }

  setStatus(status: AgentStatus): void {
    if (status === this.current.status || this.current.exited) return;
    const { dialog } = this.current;
    this.current = { seq: ++this.sequence, status, ...(dialog ? { dialog } : {}) };
    this.emit('status_change', this.currentStatus());
  }

  /**
   * The agent shows a dialog (or no longer does, with `undefined`). The status keeps its value;
   * a change of dialog is a status change, so `/events` subscribers and resumes learn of it.
   */
  setDialog(dialog: Dialog | undefined): void {
    if (this.current.exited) return;
    if (JSON.stringify(dialog) === JSON.stringify(this.current.dialog)) return;
    this.current = { seq: ++this.sequence, status: this.current.status, ...(dialog ? { dialog: copyDialog(dialog) } : {}) };
    this.emit('status_change', this.currentStatus());
  }

  /**
   * The agent ended: the status becomes `stable` for good and carries how it
   * ended. Announced even when the status already was `stable`, so a
   * subscriber (new, resumed or live) learns it from the status alone.
   */
  end(exit: AgentExit): void {
    if (this.current.exited) return;
    this.current = { seq: ++this.sequence, status: 'stable', exited: { ...exit } };
    this.emit('status_change', { ...this.current, exited: { ...exit } });
  }

  /** Records a user message and announces it. */
  addUser(content: string): AgentMessage {
    return this.append('user', content);
  }

  /**
   * Sets the content of the agent's current reply: a new agent message after
   * a user message (or at the start), else an update of the latest one.
   * Empty content never creates a message, and an unchanged one emits nothing.
   */
  updateAgent(content: string): void {
    const latest = this.entries.at(-1);
    if (!latest || latest.message.role === 'user' || this.entries.length <= this.restoredCount) {
      if (content !== '') this.append('agent', content);
      return;
    }
    if (latest.message.content === content) return;
    latest.message = { ...latest.message, content, time: this.now() };
    latest.seq = ++this.sequence;
    this.emit('message_update', { seq: latest.seq, message: { ...latest.message } });
  }

  /** Appends text to the agent's current reply (streaming transports). */
  appendAgent(text: string): void {
    const latest = this.entries.at(-1);
    const base = latest && latest.message.role === 'agent' && this.entries.length > this.restoredCount ? latest.message.content : '';
    this.updateAgent(base + text);
  }

  /**
   * Puts the messages of an earlier run (a state file) before this run's, renumbered from 0.
   * Meant for start-up, before anyone reads the conversation: this run's messages are renumbered
   * after them. They are history only: the agent's next reply is a new message.
   */
  restore(messages: readonly Pick<AgentMessage, 'role' | 'content' | 'time'>[]): void {
    const restored = messages.map((message) => ({
      message: { id: 0, role: message.role, content: message.content, time: message.time },
      seq: ++this.sequence,
    }));
    this.entries.unshift(...restored);
    this.entries.forEach((entry, index) => {
      entry.message = { ...entry.message, id: index };
    });
    this.restoredCount += restored.length;
  }

  /** Records and announces an agent-side error. */
  error(message: string, fatal = false): AgentErrorEvent {
    const event: AgentErrorEvent = { seq: ++this.sequence, message, fatal, time: this.now() };
    this.errors.push(event);
    if (this.errors.length > KEPT_ERRORS) this.errors.shift();
    this.emit('agent_error', { ...event });
    return event;
  }

  /**
   * Adds an activity, or replaces the one with the same id (a tool call's progress, a new plan,
   * a growing thought), and announces it. The place (`afterMessage`) is set when it first appears.
   */
  recordActivity(activity: ActivityUpdate): void {
    const existing = this.activityEntries.find((entry) => entry.activity.id === activity.id);
    const afterMessage = existing?.activity.afterMessage ?? this.entries.length - 1;
    const next = { ...activity, afterMessage, time: this.now() } as AgentActivity;
    const seq = ++this.sequence;
    if (existing) {
      existing.activity = next;
      existing.seq = seq;
    } else {
      this.activityEntries.push({ activity: next, seq });
      if (this.activityEntries.length > KEPT_ACTIVITIES) this.activityEntries.shift();
    }
    this.emit('activity', { seq, activity: structuredClone(next) });
  }

  /** The activity with this id, if kept. */
  activity(id: string): AgentActivity | undefined {
    const found = this.activityEntries.find((entry) => entry.activity.id === id);
    return found ? structuredClone(found.activity) : undefined;
  }

  /** Every activity kept, in the order they first appeared. */
  activities(): AgentActivity[] {
    return this.activityEntries.map((entry) => structuredClone(entry.activity));
  }

  /** Records and announces a step of a permission request. */
  permission(event: Omit<PermissionEvent, 'seq' | 'time'>): PermissionEvent {
    const recorded: PermissionEvent = { ...structuredClone(event), seq: ++this.sequence, time: this.now() };
    this.permissionEvents.push(recorded);
    if (this.permissionEvents.length > KEPT_PERMISSIONS) this.permissionEvents.shift();
    this.emit('permission', structuredClone(recorded));
    return recorded;
  }

  /**
   * Everything that changed after `seq`: messages in their current form
   * (ordered by the sequence of their last change), errors still kept, and
   * the status if it flipped since.
   */
  changesSince(seq: number): ConversationChanges {
    const messages = this.entries
      .filter((entry) => entry.seq > seq)
      .sort((a, b) => a.seq - b.seq)
      .map((entry) => ({ seq: entry.seq, message: { ...entry.message } }));
    return {
      messages,
      errors: this.errors.filter((event) => event.seq > seq).map((event) => ({ ...event })),
      activities: this.activityEntries
        .filter((entry) => entry.seq > seq)
        .sort((a, b) => a.seq - b.seq)
        .map((entry) => ({ seq: entry.seq, activity: structuredClone(entry.activity) })),
      permissions: this.permissionEvents.filter((event) => event.seq > seq).map((event) => structuredClone(event)),
      status: this.current.seq > seq ? this.currentStatus() : undefined,
    };
  }

  /**
   * The whole state as events, for a new subscriber: every message, every activity, the
   * permission steps kept, then the status.
   */
  replay(): { messages: MessageUpdateEvent[]; activities: ActivityEvent[]; permissions: PermissionEvent[]; status: StatusChangeEvent } {
    return {
      messages: this.entries.map((entry) => ({ seq: entry.seq, message: { ...entry.message } })),
      activities: this.activityEntries.map((entry) => ({ seq: entry.seq, activity: structuredClone(entry.activity) })),
      permissions: this.permissionEvents.map((event) => structuredClone(event)),
      status: this.currentStatus(),
    };
  }

  private currentStatus(): StatusChangeEvent {
    const { exited, dialog } = this.current;
    return { ...this.current, ...(exited ? { exited: { ...exited } } : {}), ...(dialog ? { dialog: copyDialog(dialog) } : {}) };
  }

  private append(role: AgentRole, content: string): AgentMessage {
    const message: AgentMessage = { id: this.entries.length, role, content, time: this.now() };
    const seq = ++this.sequence;
    this.entries.push({ message, seq });
    this.emit('message_update', { seq, message: { ...message } });
    return { ...message };
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }
}
