/**
 * @module @switchyard/observability
 * Observability for the Switchyard gateway and workflow service: svc_*
 * Prometheus metrics with bounded label cardinality, JSON logs with
 * redaction and rotation, alert rules with chat, pager and e-mail
 * notifiers, all fed by the other packages' typed events, never called
 * from their hot paths. Tracing is in `@switchyard/observability/tracing`.
 */

export type { DestinationStream } from 'pino';
export {
  type AlertEvents,
  type AlertInstanceStatus,
  AlertManager,
  type AlertManagerOptions,
  type AlertRuleStatus,
  type AlertsStatus,
} from './alerts/alertManager.js';
export {
  type ComparisonOperator,
  type ConditionNode,
  type ConditionResult,
  evaluateCondition,
  type ParsedCondition,
  parseCondition,
  type SignalReader,
} from './alerts/expression.js';
export { SignalStore, type SignalStoreOptions } from './alerts/signalStore.js';
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
  type AlertRuleConfig,
  type AlertsConfig,
  alertRuleSchema,
  alertsConfigSchema,
  CHANNELS,
  type Channel,
  DEFAULT_ALERT_RULES,
  durationSchema,
  LOG_LEVELS,
  type LoggingConfig,
  loggingConfigSchema,
  type MetricsConfig,
  metricsConfigSchema,
  type NotificationsConfig,
  notificationsConfigSchema,
  type ObservabilityConfig,
  type ObservabilityConfigInput,
  observabilityConfigSchema,
  SECRET_CONFIG_PATHS,
  SEVERITIES,
  sizeSchema,
  type TracingConfig,
  tracingConfigSchema,
} from './config/schemas.js';
export { formatDuration, parseDuration, parseSize } from './config/units.js';
export { InvalidExpression, NotificationFailed, ObservabilityError, type ObservabilityErrorCode } from './errors.js';
export type * from './events.js';
export { OBSERVER_METHODS } from './events.js';
export { EventLog } from './logging/eventLog.js';
export {
  type CreateLoggerOptions,
  createLogger,
  type Logger,
  type LoggerHandle,
  loggerOptions,
  openLogDestination,
} from './logging/logger.js';
export { REDACTED, redactSecrets, SECRET_KEYS, scrubSecrets } from './logging/redaction.js';
export { RotatingFileStream, type RotatingFileStreamOptions } from './logging/rotatingFileStream.js';
export {
  GatewayMetrics,
  type GatewayMetricsOptions,
  NO_PROVIDER_LABEL,
  REQUEST_DURATION_BUCKETS,
  type TokenPrice,
  TTFB_BUCKETS,
} from './metrics/gatewayMetrics.js';
export { LabelLimiter, OTHER_LABEL, UNKNOWN_LABEL } from './metrics/labelLimiter.js';
export { MetricsServer, type MetricsServerOptions } from './metrics/metricsServer.js';
export { collectProcessMetrics } from './metrics/processMetrics.js';
export { tokenCost } from './metrics/tokenCost.js';
export { WebsocketMetrics, type WebsocketMetricsOptions } from './metrics/websocketMetrics.js';
export { WorkflowMetrics, type WorkflowMetricsOptions } from './metrics/workflowMetrics.js';
export { ChatWebhookNotifier, type ChatWebhookOptions, chatPayload } from './notify/chatNotifier.js';
export { type DeliveryRecord, type DispatcherEvents, type DispatcherOptions, NotificationDispatcher } from './notify/dispatcher.js';
export { EmailNotifier, type EmailOptions, emailMessage } from './notify/emailNotifier.js';
export { dispatcherFromConfig, type NotifiersFromConfigOptions, notifiersFromConfig } from './notify/fromConfig.js';
export {
  type AlertNotification,
  type Notification,
  type Notifier,
  type RenderedNotification,
  type RotationNotification,
  renderNotification,
  type Severity,
} from './notify/notification.js';
export { PagerNotifier, type PagerOptions, pagerRequest } from './notify/pagerNotifier.js';
export { RotationNotifier, type RotationNotifierOptions } from './notify/rotationNotifier.js';
export { parseSmtpServer, type SmtpServerAddress } from './notify/smtpServer.js';
export { type AlertsReport, type CreateObservabilityOptions, createObservability, type Observability } from './observability.js';
export { type GatewaySources, type ObserverSinks, observeGateway, observeWorkflow } from './observe.js';
export { ensureRequestId, REQUEST_ID_HEADER, requestIdFrom } from './requestId.js';
export { UsageMetrics, type UsageMetricsOptions } from './usage/usageMetrics.js';
export {
  csvField,
  USAGE_CSV_COLUMNS,
  type UsageCountsJson,
  type UsageGroupTotals,
  UsageQuery,
  type UsageQueryOptions,
  type UsageReport,
  type UsageSeriesPoint,
  usageCsv,
} from './usage/usageQuery.js';
export {
  ANONYMOUS_CLIENT,
  type CountedRequest,
  DEFAULT_USAGE_FLUSH_INTERVAL_MS,
  NO_PROVIDER,
  type RequestEndSource,
  UsageRecorder,
  type UsageRecorderOptions,
} from './usage/usageRecorder.js';
export {
  addCounts,
  compareBuckets,
  emptyCounts,
  groupValue,
  MemoryUsageStore,
  rollupId,
  USAGE_GROUP_BYS,
  USAGE_MINUTE_MS,
  type UsageBucket,
  type UsageCounts,
  type UsageDimensions,
  type UsageGroupBy,
  type UsageRollup,
  type UsageSeriesQuery,
  type UsageStore,
} from './usage/usageStore.js';
