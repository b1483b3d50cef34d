/**
 * @module @switchyard/observability/notify
 * The notifiers alerts and credential rotations are delivered through
 * (chat webhook, pager, e-mail), built from the `notifications` config
 * section by `createObservability`. For a host that sends its own
 * notifications through the same channels. The `Notifier` port and the
 * notification types are on the package root.
 *
 * @example
 * ```ts
 * import { notifiersFromConfig } from '@switchyard/observability/notify';
 * ```
 */

export { ChatWebhookNotifier, type ChatWebhookOptions } from './notify/chatNotifier.js';
export { EmailNotifier, type EmailOptions } from './notify/emailNotifier.js';
export { dispatcherFromConfig, type NotifiersFromConfigOptions, notifiersFromConfig } from './notify/fromConfig.js';
export { renderNotification } from './notify/notification.js';
export { PagerNotifier, type PagerOptions } from './notify/pagerNotifier.js';
export { RotationNotifier, type RotationNotifierOptions } from './notify/rotationNotifier.js';
