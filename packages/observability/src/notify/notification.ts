/**
 * @module notification
 * What gets sent: an alert that fires or resolves, or a credential
 * rotation notice; and the one rendering of either (title, text, fields)
 * that every channel formats from, so chat, pager and e-mail say the same.
 */
import type { Channel } from '../config/schemas.js';
import type { CredentialRotatedEvent } from '../events.js';

/** Severities, as alert rules and PagerDuty name them. */
export type Severity = 'critical' | 'error' | 'warning' | 'info';

/** An alert rule instance that started firing or resolved. */
export interface AlertNotification {
  kind: 'alert';
  status: 'firing' | 'resolved';
  rule: string;
  severity: Severity;
  /** The provider of a per-provider rule; `null` for a service-wide one. */
  provider: string | null;
  condition: string;
  summary: string;
  /** What each comparison saw at the last evaluation. */
  values: Record<string, number | string | null>;
  /** When the condition first held (epoch ms). */
  activeSince: number;
  firedAt: number;
  resolvedAt: number | null;
  /** Stable per rule and provider: a pager resolves the incident its trigger opened. */
  dedupKey: string;
}

/** A credential pool rotated away from a credential. */
export interface RotationNotification {
  kind: 'credential_rotation';
  provider: string;
  from: string | null;
  to: string;
  reason: CredentialRotatedEvent['reason'];
  at: number;
}

/** Anything a notifier sends. */
export type Notification = AlertNotification | RotationNotification;

/**
 * A channel's sender. `send` resolves when the far end accepted the
 * message, and throws {@link NotificationFailed} (with `retryable`) when
 * it did not; `signal` aborts an attempt that ran past its time limit.
 */
export interface Notifier {
  readonly channel: Channel;
  send(notification: Notification, signal: AbortSignal): Promise<void>;
  close?(): Promise<void>;
}

/** A notification rendered for people. */
export interface RenderedNotification {
  title: string;
  text: string;
  severity: Severity;
  fields: [name: string, value: string][];
  /** When it happened (epoch ms). */
  at: number;
}

function formatValue(value: number | string | null): string {
  if (value === null) return 'no data';
  if (typeof value === 'string') return value;
  return Number.isInteger(value) ? String(value) : value.toPrecision(4).replace(/\.?0+$/, '');
}

/**
 * Renders a notification once for every channel.
 *
 * @example
 * ```ts
 * renderNotification(n).title; // '[FIRING] provider_down · openai (critical)'
 * ```
 */
export function renderNotification(notification: Notification): RenderedNotification {
  if (notification.kind === 'credential_rotation') {
    return {
      title: `Credential rotated · ${notification.provider}`,
      text: `${notification.provider} switched from ${notification.from ?? '(none)'} to ${notification.to} (${notification.reason}).`,
      severity: 'info',
      fields: [
        ['provider', notification.provider],
        ['from', notification.from ?? '(none)'],
        ['to', notification.to],
        ['reason', notification.reason],
      ],
      at: notification.at,
    };
  }
  const where = notification.provider === null ? '' : ` · ${notification.provider}`;
  const firing = notification.status === 'firing';
  const fields: [string, string][] = [
    ['rule', notification.rule],
    ['severity', notification.severity],
    ['condition', notification.condition],
  ];
  if (notification.provider !== null) fields.push(['provider', notification.provider]);
  for (const [comparison, value] of Object.entries(notification.values)) fields.push([comparison, formatValue(value)]);
  fields.push(['active since', new Date(notification.activeSince).toISOString()]);
  if (notification.resolvedAt !== null) fields.push(['resolved at', new Date(notification.resolvedAt).toISOString()]);
  return {
    title: `[${firing ? 'FIRING' : 'RESOLVED'}] ${notification.rule}${where} (${notification.severity})`,
    text: firing ? notification.summary : `Resolved: ${notification.summary}`,
    severity: firing ? notification.severity : 'info',
    fields,
    at: firing ? notification.firedAt : (notification.resolvedAt ?? notification.firedAt),
  };
}
