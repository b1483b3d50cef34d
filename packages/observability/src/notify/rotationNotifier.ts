/**
 * @module rotationNotifier
 * Credential-rotation notices through the alert channels. A pool under
 * rate limits may rotate many times a minute, so notices are throttled to
 * one per provider and reason per `minIntervalMs`; the suppressed ones are
 * counted in the next notice's log line rather than lost silently.
 */
import { type Clock, systemClock } from '@switchyard/runtime';
import type { Channel } from '../config/schemas.js';
import type { CredentialRotatedEvent, EventObserver } from '../events.js';
import type { NotificationDispatcher } from './dispatcher.js';

/** Options of {@link RotationNotifier}. */
export interface RotationNotifierOptions {
  dispatcher: NotificationDispatcher;
  channels: readonly Channel[];
  /** At most one notice per provider and reason within this (default 5 minutes). */
  minIntervalMs?: number;
  clock?: Clock;
}

/**
 * Sends a notice when a credential pool rotates, as an {@link EventObserver}.
 *
 * @example
 * ```ts
 * observeGateway({ credentials: pool.events }, { notifications: new RotationNotifier({ dispatcher, channels: ['chat'] }) });
 * ```
 */
export class RotationNotifier implements EventObserver {
  private readonly clock: Clock;
  private readonly minIntervalMs: number;
  private readonly lastSent = new Map<string, number>();
  /** Notices held back by the throttle so far. */
  suppressed = 0;

  constructor(private readonly options: RotationNotifierOptions) {
    this.clock = options.clock ?? systemClock;
    this.minIntervalMs = options.minIntervalMs ?? 300_000;
  }

  onCredentialRotated(event: CredentialRotatedEvent): void {
    const now = this.clock.now();
    const key = `${event.provider}\u0001${event.reason}`;
    const last = this.lastSent.get(key);
    if (last !== undefined && now - last < this.minIntervalMs) {
      this.suppressed++;
      return;
    }
    this.lastSent.set(key, now);
    this.options.dispatcher.dispatch(
      { kind: 'credential_rotation', provider: event.provider, from: event.from, to: event.to, reason: event.reason, at: event.at ?? now },
      this.options.channels,
    );
  }
}
