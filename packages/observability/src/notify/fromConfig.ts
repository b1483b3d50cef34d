/**
 * @module fromConfig
 * Builds the notifiers and the dispatcher from `notifications.*`.
 */
import type { lookup as dnsLookup } from 'node:dns';
import type { Scheduler } from '@switchyard/runtime';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Dispatcher } from 'undici';
import type { NotificationsConfig } from '../config/schemas.js';
import { ChatWebhookNotifier } from './chatNotifier.js';
import { NotificationDispatcher } from './dispatcher.js';
import { EmailNotifier } from './emailNotifier.js';
import type { Notifier } from './notification.js';
import { PagerNotifier } from './pagerNotifier.js';

/** Options of {@link notifiersFromConfig} and {@link dispatcherFromConfig}. */
export interface NotifiersFromConfigOptions {
  /** undici dispatcher for the webhook and pager (proxy, custom pool). */
  httpDispatcher?: Dispatcher;
  /** The lookup the e-mail notifier's SMTP connections resolve their host with, at connect time (see `EmailOptions.lookup`). */
  smtpLookup?: typeof dnsLookup;
  /** `payload.source` of pager events (default `switchyard`). */
  source?: string;
}

/**
 * One notifier per enabled channel.
 *
 * @example
 * ```ts
 * const notifiers = notifiersFromConfig(notificationsConfigSchema.parse(config.notifications));
 * ```
 */
export function notifiersFromConfig(config: NotificationsConfig, options: NotifiersFromConfigOptions = {}): Notifier[] {
  const notifiers: Notifier[] = [];
  const dispatcher = options.httpDispatcher ? { dispatcher: options.httpDispatcher } : {};
  const { chat, pager, email } = config;
  if (chat.enabled && chat.webhook_url) {
    notifiers.push(
      new ChatWebhookNotifier({
        webhookUrl: chat.webhook_url,
        username: chat.username,
        ...(chat.channel ? { channel: chat.channel } : {}),
        ...dispatcher,
      }),
    );
  }
  if (pager.enabled && pager.service_key) {
    notifiers.push(
      new PagerNotifier({ serviceKey: pager.service_key, url: pager.url, source: options.source ?? 'switchyard', ...dispatcher }),
    );
  }
  if (email.enabled && email.smtp_server && email.from) {
    notifiers.push(
      new EmailNotifier({
        smtpServer: email.smtp_server,
        from: email.from,
        to: email.to,
        timeoutMs: config.retry.timeout,
        ...(email.username ? { username: email.username } : {}),
        ...(email.password ? { password: email.password } : {}),
        ...(options.smtpLookup ? { lookup: options.smtpLookup } : {}),
      }),
    );
  }
  return notifiers;
}

/**
 * The dispatcher for `notifications.*`, with its retry settings.
 *
 * @example
 * ```ts
 * const dispatcher = dispatcherFromConfig(config.notifications, { logger, registry });
 * ```
 */
export function dispatcherFromConfig(
  config: NotificationsConfig,
  options: NotifiersFromConfigOptions & { scheduler?: Scheduler; logger?: Logger; registry?: Registry } = {},
): NotificationDispatcher {
  return new NotificationDispatcher({
    notifiers: notifiersFromConfig(config, options),
    maxAttempts: config.retry.max_attempts,
    initialBackoffMs: config.retry.initial_backoff,
    maxBackoffMs: config.retry.max_backoff,
    timeoutMs: config.retry.timeout,
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.registry ? { registry: options.registry } : {}),
  });
}
