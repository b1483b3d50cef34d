/**
 * @module chatNotifier
 * Chat notifications through an incoming webhook, in Slack's shape
 * (`text`, `channel`, `username`, and an attachment with a colour bar and
 * fields). Mattermost and Rocket.Chat accept the same payload.
 */
import type { Dispatcher } from 'undici';
import { postJson } from './httpPost.js';
import { type Notification, type Notifier, renderNotification, type Severity } from './notification.js';

/** Options of {@link ChatWebhookNotifier}. */
export interface ChatWebhookOptions {
  webhookUrl: string;
  /** Channel override (`#alerts`); the webhook's own channel when absent. */
  channel?: string;
  username?: string;
  dispatcher?: Dispatcher;
}

const COLORS: Record<Severity, string> = { critical: '#d0021b', error: '#e8590c', warning: '#f5a623', info: '#2eb67d' };

/**
 * The Slack-style payload of a notification.
 *
 * @example
 * ```ts
 * chatPayload(notification, { channel: '#alerts' }).text; // '[FIRING] high_error_rate (warning)'
 * ```
 */
export function chatPayload(notification: Notification, options: { channel?: string; username?: string } = {}): Record<string, unknown> {
  const rendered = renderNotification(notification);
  const resolved = notification.kind === 'alert' && notification.status === 'resolved';
  return {
    ...(options.channel ? { channel: options.channel } : {}),
    username: options.username ?? 'switchyard',
    text: rendered.title,
    attachments: [
      {
        color: resolved ? COLORS.info : COLORS[rendered.severity],
        fallback: `${rendered.title}: ${rendered.text}`,
        title: rendered.title,
        text: rendered.text,
        fields: rendered.fields.map(([title, value]) => ({ title, value, short: value.length <= 40 })),
        ts: Math.floor(rendered.at / 1000),
      },
    ],
  };
}

/**
 * Posts notifications to a chat webhook.
 *
 * @example
 * ```ts
 * const chat = new ChatWebhookNotifier({ webhookUrl: 'https://hooks.slack.com/services/…', channel: '#alerts' });
 * ```
 */
export class ChatWebhookNotifier implements Notifier {
  readonly channel = 'chat' as const;

  constructor(private readonly options: ChatWebhookOptions) {}

  async send(notification: Notification, signal: AbortSignal): Promise<void> {
    const { webhookUrl, dispatcher, ...rest } = this.options;
    await postJson({
      channel: 'chat',
      url: webhookUrl,
      body: chatPayload(notification, rest),
      signal,
      ...(dispatcher ? { dispatcher } : {}),
    });
  }
}
