/**
 * @module pagerNotifier
 * Pages through the PagerDuty Events API v2. A firing alert is a `trigger`
 * and its resolution a `resolve` with the same `dedup_key`, so the
 * incident the trigger opened is the one that closes. Credential rotations
 * are not incidents: they go to the Change Events endpoint.
 */
import type { Dispatcher } from 'undici';
import { postJson } from './httpPost.js';
import { type Notification, type Notifier, renderNotification } from './notification.js';

/** Options of {@link PagerNotifier}. */
export interface PagerOptions {
  /** The Events v2 integration (routing) key. */
  serviceKey: string;
  /** Events API base URL (default https://events.pagerduty.com). */
  url?: string;
  /** `payload.source` (default `switchyard`). */
  source?: string;
  dispatcher?: Dispatcher;
}

/**
 * The Events v2 request (path and body) for a notification.
 *
 * @example
 * ```ts
 * pagerRequest(firing, { serviceKey: 'R0UT1NG' }); // { path: '/v2/enqueue', body: { event_action: 'trigger', dedup_key: '…', … } }
 * ```
 */
export function pagerRequest(
  notification: Notification,
  options: Pick<PagerOptions, 'serviceKey' | 'source'>,
): { path: string; body: Record<string, unknown> } {
  const rendered = renderNotification(notification);
  const source = options.source ?? 'switchyard';
  const details = Object.fromEntries(rendered.fields);
  if (notification.kind === 'credential_rotation') {
    return {
      path: '/v2/change/enqueue',
      body: {
        routing_key: options.serviceKey,
        payload: { summary: rendered.title.slice(0, 1024), timestamp: new Date(rendered.at).toISOString(), source, custom_details: details },
      },
    };
  }
  if (notification.status === 'resolved') {
    return { path: '/v2/enqueue', body: { routing_key: options.serviceKey, event_action: 'resolve', dedup_key: notification.dedupKey } };
  }
  return {
    path: '/v2/enqueue',
    body: {
      routing_key: options.serviceKey,
      event_action: 'trigger',
      dedup_key: notification.dedupKey,
      payload: {
        summary: `${rendered.title}: ${rendered.text}`.slice(0, 1024),
        source,
        severity: notification.severity,
        timestamp: new Date(rendered.at).toISOString(),
        component: notification.provider ?? undefined,
        group: source,
        class: notification.rule,
        custom_details: details,
      },
    },
  };
}

/**
 * Sends notifications to PagerDuty (or anything speaking Events v2).
 *
 * @example
 * ```ts
 * const pager = new PagerNotifier({ serviceKey: process.env.PD_ROUTING_KEY! });
 * ```
 */
export class PagerNotifier implements Notifier {
  readonly channel = 'pager' as const;
  private readonly base: string;

  constructor(private readonly options: PagerOptions) {
    this.base = (options.url ?? 'https://events.pagerduty.com').replace(/\/+$/, '');
  }

  async send(notification: Notification, signal: AbortSignal): Promise<void> {
    const { path, body } = pagerRequest(notification, this.options);
    await postJson({
      channel: 'pager',
      url: `${this.base}${path}`,
      body,
      signal,
      ...(this.options.dispatcher ? { dispatcher: this.options.dispatcher } : {}),
    });
  }
}
