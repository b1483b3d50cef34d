/**
 * @module dispatcher
 * Delivers notifications to their channels. Each channel has its own queue
 * and worker, so a failing webhook retrying with backoff never holds up the
 * pager or the e-mail; within a channel, order is kept, so a pager never
 * sees a `resolve` before its `trigger`. Retries back off exponentially
 * with jitter on the injected scheduler, and every outcome is counted and
 * kept in a short history for the operations API.
 */
import { type Scheduler, systemScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Channel } from '../config/schemas.js';
import { NotificationFailed, ObservabilityError } from '../errors.js';
import type { Notification, Notifier } from './notification.js';

/** Options of {@link NotificationDispatcher}. */
export interface DispatcherOptions {
  notifiers: readonly Notifier[];
  /** Clock and timers of the backoff between tries. */
  scheduler?: Scheduler;
  /**
   * Timers of the per-try time limit. Real time by default, even when
   * `scheduler` is a fake one, because the I/O it bounds is real.
   */
  timeoutScheduler?: Scheduler;
  /** Tries per notification, the first included (default 5). */
  maxAttempts?: number;
  /** Backoff before the second try (default 1 s); doubles each try. */
  initialBackoffMs?: number;
  /** Backoff ceiling (default 60 s). */
  maxBackoffMs?: number;
  /** Time limit of one try (default 10 s). */
  timeoutMs?: number;
  /** Queue length per channel; past it the oldest waiting notification is dropped (default 1,000). */
  maxQueue?: number;
  /** Jitter source in [0, 1) (default Math.random). */
  random?: () => number;
  logger?: Logger;
  /** Registers `svc_notifications_total{channel,kind,outcome}` here. */
  registry?: Registry;
}

/** The outcome of one notification on one channel. */
export interface DeliveryRecord {
  channel: Channel;
  kind: Notification['kind'];
  /** The alert rule, or `credential_rotation`. */
  subject: string;
  outcome: 'delivered' | 'failed' | 'dropped';
  attempts: number;
  /** Why it failed (never a URL or key). */
  error: string | null;
  at: number;
}

/** Events of {@link NotificationDispatcher}. */
export interface DispatcherEvents {
  'notification:delivered': (record: DeliveryRecord) => void;
  'notification:failed': (record: DeliveryRecord) => void;
}

interface ChannelQueue {
  notifier: Notifier;
  items: Notification[];
  running: boolean;
}

const HISTORY = 100;

/**
 * Per-channel queues with retry and backoff.
 *
 * @example
 * ```ts
 * const dispatcher = new NotificationDispatcher({ notifiers: [new ChatWebhookNotifier({ webhookUrl })] });
 * dispatcher.dispatch(notification, ['chat', 'pager']); // pager not configured: skipped
 * await dispatcher.idle();
 * ```
 */
export class NotificationDispatcher {
  readonly events = new EventEmitter<DispatcherEvents>();
  private readonly scheduler: Scheduler;
  private readonly timeoutScheduler: Scheduler;
  private readonly queues = new Map<Channel, ChannelQueue>();
  private readonly maxAttempts: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly timeoutMs: number;
  private readonly maxQueue: number;
  private readonly random: () => number;
  private readonly logger: Logger | undefined;
  private readonly outcomes: Counter<'channel' | 'kind' | 'outcome'> | undefined;
  private readonly history: DeliveryRecord[] = [];
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(options: DispatcherOptions) {
    for (const notifier of options.notifiers) {
      if (this.queues.has(notifier.channel)) {
        throw new ObservabilityError('invalid_argument', `two notifiers for channel ${notifier.channel}`);
      }
      this.queues.set(notifier.channel, { notifier, items: [], running: false });
    }
    this.scheduler = options.scheduler ?? systemScheduler;
    this.timeoutScheduler = options.timeoutScheduler ?? systemScheduler;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.initialBackoffMs = options.initialBackoffMs ?? 1000;
    this.maxBackoffMs = options.maxBackoffMs ?? 60_000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxQueue = options.maxQueue ?? 1000;
    this.random = options.random ?? Math.random;
    this.logger = options.logger;
    this.outcomes = options.registry
      ? new Counter({
          name: 'svc_notifications_total',
          help: 'Notifications by channel, kind (alert or credential_rotation) and outcome (delivered, failed, dropped).',
          labelNames: ['channel', 'kind', 'outcome'],
          registers: [options.registry],
        })
      : undefined;
  }

  /** Channels with a notifier. */
  channels(): Channel[] {
    return [...this.queues.keys()];
  }

  /**
   * Queues a notification on each named channel that has a notifier;
   * returns at once. Channels without a notifier are skipped (a rule may
   * name `pager` where no pager is configured).
   */
  dispatch(notification: Notification, channels: readonly Channel[]): void {
    if (this.closed) return;
    for (const channel of new Set(channels)) {
      const queue = this.queues.get(channel);
      if (!queue) continue;
      if (queue.items.length >= this.maxQueue) {
        // The head may be in flight; drop the oldest one still waiting.
        const dropped = queue.items.splice(queue.running ? 1 : 0, 1)[0];
        if (dropped) this.record(channel, dropped, 'dropped', 0, 'queue full');
      }
      queue.items.push(notification);
      if (!queue.running) void this.drain(queue);
    }
  }

  /** Resolves when every queue is empty and nothing is in flight. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** The latest outcomes, newest last (at most 100). */
  recent(): DeliveryRecord[] {
    return [...this.history];
  }

  /** Stops taking notifications, drops those waiting, and closes the notifiers. */
  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.queues.values()) queue.items.splice(queue.running ? 1 : 0);
    await Promise.all([...this.queues.values()].map((q) => q.notifier.close?.()));
  }

  private isIdle(): boolean {
    for (const queue of this.queues.values()) if (queue.running || queue.items.length > 0) return false;
    return true;
  }

  private async drain(queue: ChannelQueue): Promise<void> {
    queue.running = true;
    while (queue.items.length > 0) {
      await this.deliver(queue.notifier, queue.items[0]!);
      queue.items.shift();
    }
    queue.running = false;
    if (this.isIdle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private async deliver(notifier: Notifier, notification: Notification): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.attempt(notifier, notification);
        this.record(notifier.channel, notification, 'delivered', attempt, null);
        return;
      } catch (error) {
        const retryable = error instanceof NotificationFailed ? error.retryable : !(error instanceof ObservabilityError);
        const message = error instanceof Error ? error.message : String(error);
        if (!retryable || attempt >= this.maxAttempts || this.closed) {
          this.record(notifier.channel, notification, 'failed', attempt, message);
          return;
        }
        const delay = this.backoff(attempt);
        this.logger?.warn({ channel: notifier.channel, attempt, retry_in_ms: delay, error: message }, 'notification_retry');
        await this.sleep(delay);
      }
    }
  }

  private async attempt(notifier: Notifier, notification: Notification): Promise<void> {
    const controller = new AbortController();
    const timer = this.timeoutScheduler.setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      await notifier.send(notification, controller.signal);
    } finally {
      this.timeoutScheduler.clearTimeout(timer);
    }
  }

  /** Exponential backoff with equal jitter: half the step fixed, half random. */
  private backoff(attempt: number): number {
    const step = Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** (attempt - 1));
    return Math.round(step / 2 + this.random() * (step / 2));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.scheduler.setTimeout(resolve, ms));
  }

  private record(channel: Channel, notification: Notification, outcome: DeliveryRecord['outcome'], attempts: number, error: string | null) {
    const record: DeliveryRecord = {
      channel,
      kind: notification.kind,
      subject: notification.kind === 'alert' ? notification.rule : 'credential_rotation',
      outcome,
      attempts,
      error,
      at: this.scheduler.now(),
    };
    this.history.push(record);
    if (this.history.length > HISTORY) this.history.shift();
    this.outcomes?.inc({ channel, kind: notification.kind, outcome });
    if (outcome === 'delivered') this.events.emit('notification:delivered', record);
    else {
      this.logger?.error({ channel, kind: record.kind, subject: record.subject, attempts, error }, 'notification_failed');
      this.events.emit('notification:failed', record);
    }
  }
}
