/**
 * @module @switchyard/observability/config
 * The pieces of the observability config, for a host that embeds the
 * `observability` section in its own config file (the gateway does): the
 * per-section schemas, the duration and size units they accept, the
 * signal names alert rules read, the default rules, and the paths that
 * hold secrets. The whole-section schema and the config types are on the
 * package root.
 *
 * @example
 * ```ts
 * import { durationSchema, parseDuration } from '@switchyard/observability/config';
 * const windowMs = parseDuration('5m'); // 300000
 * ```
 */

export {
  DEFAULT_SIGNAL_WINDOW_MS,
  lookupSignal,
  SIGNALS,
  type SignalKind,
  type SignalRef,
  type SignalScope,
  type SignalSpec,
} from './alerts/signals.js';
export {
  alertRuleSchema,
  alertsConfigSchema,
  CHANNELS,
  DEFAULT_ALERT_RULES,
  durationSchema,
  LOG_LEVELS,
  loggingConfigSchema,
  metricsConfigSchema,
  notificationsConfigSchema,
  SECRET_CONFIG_PATHS,
  SEVERITIES,
  sizeSchema,
  tracingConfigSchema,
} from './config/schemas.js';
export { formatDuration, parseDuration, parseSize } from './config/units.js';
export { parseSmtpServer, type SmtpServerAddress } from './notify/smtpServer.js';
