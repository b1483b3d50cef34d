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
 * - Each subscriber has a bounded queue. One that does not read is dropped
 *   (its connection is cut and its listeners removed) the moment the queue
 *   overflows; the session and the other subscribers never wait for it. It
 *   can reconnect with its last id and lose nothing.
 */
import type { Scheduler, TimerHandle } from '@switchyard/core-routing';
import type { AgentSession } from '../engine/agentSession.js';
import type { AgentErrorEvent, AgentExit, AgentStatus, MessageUpdateEvent, StatusChangeEvent } from '../engine/conversation.js';

/** Options of {@link EventHub}. */
export interface EventHubOptions {
  scheduler: Scheduler;
  /** Bytes a subscriber may leave unread before it is dropped (default 1 MiB). */
  maxQueuedBytes?: number;
  /** Interval of `: ping` comments that keep proxies from closing an idle stream (default 15 s). */
  heartbeatMs?: number;
}

interface Subscriber {
  close(): void;
}

const encoder = new TextEncoder();

/**
 * The body of `GET /status` and the data of `status_change` frames: the
 * status, the agent's kind and transport, and how the agent ended once it has.
 */
export function statusPayload(session: AgentSession, state: { status: AgentStatus; exited?: AgentExit | undefined }) {
  const { exited } = state;
  return {
    status: state.status,
    agent_type: session.agentType,
    transport: session.transport,
    ...(exited ? { exited: { exit_code: exited.exitCode, signal: exited.signal } } : {}),
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
  private dropped = 0;

  constructor(
    private readonly session: AgentSession,
    private readonly options: EventHubOptions,
  ) {}

  /** Open streams. */
  get size(): number {
    return this.subscribers.size;
  }

  /** Streams cut because their reader fell behind. */
  get droppedCount(): number {
    return this.dropped;
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

  /** The frames a subscriber starts with: a replay, or what it missed since `lastEventId`. */
  private firstFrames(lastEventId: string | undefined): string[] {
    const conversation = this.session.conversation;
    const match = /^([0-9a-f]+)-(\d+)$/.exec(lastEventId?.trim() ?? '');
    const seq = match && match[1] === conversation.epoch ? Number(match[2]) : Number.NaN;
    if (Number.isSafeInteger(seq) && seq <= conversation.seq) {
      const changes = conversation.changesSince(seq);
      const frames: { seq: number; text: string }[] = [
        ...changes.messages.map((e) => ({ seq: e.seq, text: sseFrame('message_update', this.messageData(e), this.id(e.seq)) })),
        ...changes.errors.map((e) => ({ seq: e.seq, text: sseFrame('agent_error', this.errorData(e), this.id(e.seq)) })),
      ];
      if (changes.status)
        frames.push({
          seq: changes.status.seq,
          text: sseFrame('status_change', this.statusData(changes.status), this.id(changes.status.seq)),
        });
      return frames.sort((a, b) => a.seq - b.seq).map((frame) => frame.text);
    }
    const replay = conversation.replay();
    // Replayed messages carry no id: a subscriber cut off mid-replay resumes with a full replay.
    // The status closes the replay with the id of the latest change.
    return [
      ...replay.messages.map((e) => sseFrame('message_update', this.messageData(e))),
      sseFrame('status_change', this.statusData(replay.status), this.id(conversation.seq)),
    ];
  }

  /**
   * Opens a stream (the body of the `/events` response). `drop` cuts the
   * subscriber's connection when it falls behind (on node:http, destroying
   * the socket); without it the stream is errored.
   */
  open(lastEventId?: string, drop?: () => void): ReadableStream<Uint8Array> {
    const conversation = this.session.conversation;
    const maxQueuedBytes = this.options.maxQueuedBytes ?? 1024 * 1024;
    const scheduler = this.options.scheduler;
    let heartbeat: TimerHandle | undefined;
    let subscriber: Subscriber | undefined;
    const detach = () => {
      conversation.off('message_update', onMessage);
      conversation.off('status_change', onStatus);
      conversation.off('agent_error', onError);
      if (heartbeat !== undefined) scheduler.clearTimeout(heartbeat);
      if (subscriber) this.subscribers.delete(subscriber);
    };
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let open = true;
    // The replay may be larger than the queue bound; only what comes after it counts against the subscriber.
    let replayBytes = 0;
    let replaying = true;
    const push = (text: string) => {
      if (!open) return;
      const bytes = encoder.encode(text);
      controller.enqueue(bytes);
      if (replaying) replayBytes += bytes.byteLength;
      else if ((controller.desiredSize ?? 0) < -replayBytes) {
        // The reader is too slow: cut it loose rather than buffer without bound.
        open = false;
        this.dropped++;
        detach();
        if (drop) drop();
        else controller.error(new Error('the subscriber fell behind and was dropped'));
      }
    };
    const onMessage = (event: MessageUpdateEvent) => push(sseFrame('message_update', this.messageData(event), this.id(event.seq)));
    const onStatus = (event: StatusChangeEvent) => push(sseFrame('status_change', this.statusData(event), this.id(event.seq)));
    const onError = (event: AgentErrorEvent) => push(sseFrame('agent_error', this.errorData(event), this.id(event.seq)));
    const beat = () => {
      push(': ping\n\n');
      if (open) heartbeat = scheduler.setTimeout(beat, this.options.heartbeatMs ?? 15_000);
    };
    return new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          controller = c;
          subscriber = {
            close: () => {
              if (!open) return;
              open = false;
              detach();
              c.close();
            },
          };
          this.subscribers.add(subscriber);
          // Replay and subscription happen in the same tick: no event can fall between them.
          push('retry: 2000\n\n');
          for (const frame of this.firstFrames(lastEventId)) push(frame);
          replaying = false;
          conversation.on('message_update', onMessage);
          conversation.on('status_change', onStatus);
          conversation.on('agent_error', onError);
          if (open) heartbeat = scheduler.setTimeout(beat, this.options.heartbeatMs ?? 15_000);
        },
        cancel: () => {
          open = false;
          detach();
        },
      },
      { highWaterMark: maxQueuedBytes, size: (chunk) => chunk.byteLength },
    );
  }

  /** Ends every stream (server shutdown). */
  closeAll(): void {
    for (const subscriber of [...this.subscribers]) subscriber.close();
  }
}
