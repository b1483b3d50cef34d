/**
 * @module eventStream
 * `GET /events`: the conversation as Server-Sent Events.
 *
 * - A new subscriber gets every message (`message_update`), then the status
 *   (`status_change`); the status carries the id to resume from.
 * - `Last-Event-ID` (header, or `?last_event_id=` for clients that cannot set
 *   headers) resumes exactly: the messages changed since, in their current
 *   form, the errors since, and the status if it changed. An id from another
 *   session gets the full replay.
 * - Frames are made when the subscriber can take them: each read gets what
 *   changed since its previous one, as a resume would. A message that changed
 *   many times meanwhile is sent once, in its current form, so a long reply
 *   streamed in many small pieces costs a slow reader time, not memory, and
 *   no subscriber is cut for reading slowly. What waits for a subscriber is
 *   at most one such batch; the session never waits for it.
 */
import type { Scheduler, TimerHandle } from '@switchyard/runtime';
import type { ActivityEvent, AgentActivity, PermissionEvent } from '../engine/activity.js';
import type { AgentSession } from '../engine/agentSession.js';
import type { AgentErrorEvent, AgentExit, AgentStatus, MessageUpdateEvent, StatusChangeEvent } from '../engine/conversation.js';
import type { Dialog } from '../engine/rules/dialogs.js';

/** Options of {@link EventHub}. */
export interface EventHubOptions {
  scheduler: Scheduler;
  /** Interval of `: ping` comments that keep proxies from closing an idle stream (default 15 s). */
  heartbeatMs?: number;
  /** Most streams (`/events` and the `/screen` stream together) open at once (default 64). */
  maxSubscribers?: number;
}

/** Default cap on open event and screen streams: each holds a socket, listeners and a heartbeat timer. */
export const DEFAULT_MAX_SUBSCRIBERS = 64;

interface Subscriber {
  close(): void;
}

/** What one stream sends: its first frames, then what changed since the previous read. */
interface StreamSource {
  /** Called once as the stream opens, with the wake-up to call on every change: the first frames and how to stop. */
  start(onChange: () => void): { first: string; stop: () => void };
  /** The frames of what changed since the previous read, or undefined when nothing did. */
  next(): string | undefined;
}

/** The conversation events a `/events` stream wakes on. */
const CONVERSATION_EVENTS = ['message_update', 'status_change', 'agent_error', 'activity', 'permission'] as const;

/** The SSE event name of each activity type. */
const ACTIVITY_EVENT_NAMES: Record<AgentActivity['type'], string> = { tool_call: 'tool_call', plan: 'plan', thought: 'agent_thought' };

/** The data of a `tool_call`, `plan` or `agent_thought` frame: the activity, in the API's snake case. */
export function activityData(activity: AgentActivity) {
  const { afterMessage, type, ...fields } = activity;
  return { ...fields, after_message: afterMessage };
}

/** The data of a `permission` frame. */
export function permissionData(event: PermissionEvent) {
  return {
    outcome: event.outcome,
    tool_call_id: event.toolCallId,
    title: event.title,
    options: [...event.options],
    ...(event.chosen !== undefined ? { chosen: event.chosen } : {}),
    time: event.time,
  };
}

const encoder = new TextEncoder();

/**
 * The body of `GET /status` and the data of `status_change` frames: the
 * status, the agent's kind and transport, and how the agent ended once it has.
 */
export function statusPayload(
  session: AgentSession,
  state: { status: AgentStatus; exited?: AgentExit | undefined; dialog?: Dialog | undefined },
) {
  const { exited, dialog } = state;
  return {
    status: state.status,
    agent_type: session.agentType,
    transport: session.transport,
    ...(exited ? { exited: { exit_code: exited.exitCode, signal: exited.signal } } : {}),
    ...(dialog ? { dialog: { text: dialog.text, options: [...dialog.options] } } : {}),
  };
}

/** Formats one SSE frame; `data` is JSON on one line, so no line of it can end the frame early. */
export function sseFrame(event: string, data: unknown, id?: string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The event streams of one session.
 *
 * @example
 * ```ts
 * const hub = new EventHub(session, { scheduler: systemScheduler });
 * app.get('/events', (c) => hub.open(c.req.header('last-event-id')));
 * ```
 */
export class EventHub {
  private readonly subscribers = new Set<Subscriber>();

  constructor(
    private readonly session: AgentSession,
    private readonly options: EventHubOptions,
  ) {}

  /** Open streams. */
  get size(): number {
    return this.subscribers.size;
  }

  /** True when no further stream may open (a stream joins the count as it opens, in the same tick). */
  get full(): boolean {
    return this.subscribers.size >= (this.options.maxSubscribers ?? DEFAULT_MAX_SUBSCRIBERS);
  }

  private id(seq: number): string {
    return `${this.session.conversation.epoch}-${seq}`;
  }

  private messageData(event: MessageUpdateEvent) {
    // `message` repeats `content` for clients written against agentapi's event shape.
    return { ...event.message, message: event.message.content };
  }

  private statusData(event: StatusChangeEvent) {
    return statusPayload(this.session, event);
  }

  private errorData(event: AgentErrorEvent) {
    return { message: event.message, fatal: event.fatal, time: event.time };
  }

  private activityFrame(event: ActivityEvent, withId = true): string {
    const name = ACTIVITY_EVENT_NAMES[event.activity.type];
    return sseFrame(name, activityData(event.activity), withId ? this.id(event.seq) : undefined);
  }

  /** The frames of everything that changed after `seq`, in sequence order (what a resume sends). */
  private framesSince(seq: number): string {
    const changes = this.session.conversation.changesSince(seq);
    const frames: { seq: number; text: string }[] = [
      ...changes.messages.map((e) => ({ seq: e.seq, text: sseFrame('message_update', this.messageData(e), this.id(e.seq)) })),
      ...changes.errors.map((e) => ({ seq: e.seq, text: sseFrame('agent_error', this.errorData(e), this.id(e.seq)) })),
      ...changes.activities.map((e) => ({ seq: e.seq, text: this.activityFrame(e) })),
      ...changes.permissions.map((e) => ({ seq: e.seq, text: sseFrame('permission', permissionData(e), this.id(e.seq)) })),
    ];
    if (changes.status)
      frames.push({
        seq: changes.status.seq,
        text: sseFrame('status_change', this.statusData(changes.status), this.id(changes.status.seq)),
      });
    return frames
      .sort((a, b) => a.seq - b.seq)
      .map((frame) => frame.text)
      .join('');
  }

  /** The frames a subscriber starts with: a replay, or what it missed since `lastEventId`. */
  private firstFrames(lastEventId: string | undefined): string {
    const conversation = this.session.conversation;
    const match = /^([0-9a-f]+)-(\d+)$/.exec(lastEventId?.trim() ?? '');
    const seq = match && match[1] === conversation.epoch ? Number(match[2]) : Number.NaN;
    if (Number.isSafeInteger(seq) && seq <= conversation.seq) return this.framesSince(seq);
    const replay = conversation.replay();
    // Replayed messages carry no id: a subscriber cut off mid-replay resumes with a full replay.
    // The status closes the replay with the id of the latest change.
    // Activities and permission steps follow the messages; each says where it belongs (`after_message`).
    const extras = [
      ...replay.activities.map((e) => ({ seq: e.seq, text: this.activityFrame(e, false) })),
      ...replay.permissions.map((e) => ({ seq: e.seq, text: sseFrame('permission', permissionData(e)) })),
    ].sort((a, b) => a.seq - b.seq);
    return [
      ...replay.messages.map((e) => sseFrame('message_update', this.messageData(e))),
      ...extras.map((frame) => frame.text),
      sseFrame('status_change', this.statusData(replay.status), this.id(conversation.seq)),
    ].join('');
  }

  /**
   * Opens a stream (the body of the `/events` response): the first frames
   * at once, then, at each read, what changed since the previous one.
   */
  open(lastEventId?: string): ReadableStream<Uint8Array> {
    const conversation = this.session.conversation;
    // The sequence number this subscriber has been sent everything up to.
    let cursor = 0;
    return this.stream({
      start: (onChange) => {
        // The first frames and the cursor are taken in the same tick: no change can fall between them.
        const first = this.firstFrames(lastEventId);
        cursor = conversation.seq;
        for (const event of CONVERSATION_EVENTS) conversation.on(event, onChange);
        const stop = () => {
          for (const event of CONVERSATION_EVENTS) conversation.off(event, onChange);
        };
        return { first, stop };
      },
      next: () => {
        if (cursor >= conversation.seq) return undefined;
        const text = this.framesSince(cursor);
        cursor = conversation.seq;
        return text || undefined;
      },
    });
  }

  /**
   * Opens a stream of the terminal screen (`GET /screen` as SSE): a `screen` frame with the
   * snapshot at once, then one at each read after the screen changed. A reader that falls
   * behind gets the screen as it is then, never a backlog. Undefined without a screen (ACP).
   */
  openScreen(): ReadableStream<Uint8Array> | undefined {
    const session = this.session;
    if (!session.screen() || !session.watchScreen) return undefined;
    const watch = session.watchScreen.bind(session);
    let changed = false;
    let last = '';
    const frame = (): string | undefined => {
      const screen = session.screen();
      if (!screen) return undefined;
      const data = JSON.stringify(screen);
      if (data === last) return undefined;
      last = data;
      return `event: screen\ndata: ${data}\n\n`;
    };
    return this.stream({
      start: (onChange) => {
        const stop = watch(() => {
          changed = true;
          onChange();
        });
        return { first: frame() ?? '', stop };
      },
      next: () => {
        if (!changed) return undefined;
        changed = false;
        return frame();
      },
    });
  }

  /**
   * The mechanics every stream shares: it counts as a subscriber from its first tick, sends `retry` and
   * its first frames at once, then at each read what `next` has (or a `: ping` once the heartbeat is due),
   * and stops watching when the reader cancels or the hub closes it. Nothing is queued ahead of the reader
   * (highWaterMark 0): a slow reader costs time, not memory.
   */
  private stream(source: StreamSource): ReadableStream<Uint8Array> {
    const scheduler = this.options.scheduler;
    const heartbeatMs = this.options.heartbeatMs ?? 15_000;
    let open = true;
    let pingDue = false;
    let heartbeat: TimerHandle | undefined;
    let wake: (() => void) | undefined;
    let stop: (() => void) | undefined;
    const notify = () => {
      const waiting = wake;
      wake = undefined;
      waiting?.();
    };
    const armHeartbeat = () => {
      heartbeat = scheduler.setTimeout(() => {
        heartbeat = undefined;
        pingDue = true;
        notify();
      }, heartbeatMs);
    };
    let subscriber: Subscriber | undefined;
    const detach = () => {
      open = false;
      stop?.();
      if (heartbeat !== undefined) scheduler.clearTimeout(heartbeat);
      if (subscriber) this.subscribers.delete(subscriber);
      notify();
    };
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          subscriber = {
            close: () => {
              if (!open) return;
              detach();
              controller.close();
            },
          };
          this.subscribers.add(subscriber);
          const started = source.start(notify);
          stop = started.stop;
          controller.enqueue(encoder.encode(`retry: 2000\n\n${started.first}`));
          armHeartbeat();
        },
        pull: async (controller) => {
          while (open) {
            const text = source.next();
            if (text) return controller.enqueue(encoder.encode(text));
            if (pingDue) {
              pingDue = false;
              armHeartbeat();
              return controller.enqueue(encoder.encode(': ping\n\n'));
            }
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
          }
        },
        cancel: detach,
      },
      { highWaterMark: 0 },
    );
  }

  /** Ends every stream (server shutdown). */
  closeAll(): void {
    for (const subscriber of [...this.subscribers]) subscriber.close();
  }
}
