/**
 * @module @switchyard/observability
 * Observability for the Switchyard gateway and workflow service: svc_*
 * Prometheus metrics with bounded label cardinality, JSON logs with
 * redaction and rotation, alert rules with chat, pager and e-mail
 * notifiers, all fed by the other packages' typed events, never called
 * from their hot paths.
 *
 * The root holds what an embedder wires up: `createObservability` and the
 * parts it returns, the config schema and types, the usage store port and
 * its memory adapter, and the errors. The rest is on named subpaths:
 * `/tracing` (OpenTelemetry, loaded only by processes that trace),
 * `/config` (the section schemas, duration and size units, signal names),
 * `/events` (the typed events the other packages emit), `/logging` (log
 * destinations, rotation, redaction), `/notify` (the notifiers), `/usage`
 * (helpers for `UsageStore` adapters) and `/contract`.
 */

export {
  type AlertEvents,
  type AlertInstanceStatus,
  AlertManager,
  type AlertManagerOptions,
  type AlertRuleStatus,
  type AlertsStatus,
} from './alerts/alertManager.js';
export type {
  AlertRuleConfig,
  AlertsConfig,
  Channel,
  LoggingConfig,
  MetricsConfig,
  NotificationsConfig,
  ObservabilityConfig,
  ObservabilityConfigInput,
  TracingConfig,
} from './config/schemas.js';
export { observabilityConfigSchema } from './config/schemas.js';
export { InvalidExpression, NotificationFailed, ObservabilityError, type ObservabilityErrorCode } from './errors.js';
export { type CreateLoggerOptions, createLogger, type Logger, type LoggerHandle } from './logging/logger.js';
export { GatewayMetrics, type GatewayMetricsOptions, type TokenPrice } from './metrics/gatewayMetrics.js';
export { MetricsServer, type MetricsServerOptions } from './metrics/metricsServer.js';
export { tokenCost } from './metrics/tokenCost.js';
export { WebsocketMetrics, type WebsocketMetricsOptions } from './metrics/websocketMetrics.js';
export { WorkflowMetrics, type WorkflowMetricsOptions } from './metrics/workflowMetrics.js';
export { type DeliveryRecord, type DispatcherEvents, type DispatcherOptions, NotificationDispatcher } from './notify/dispatcher.js';
export type {
  AlertNotification,
  Notification,
  Notifier,
  RenderedNotification,
  RotationNotification,
  Severity,
} from './notify/notification.js';
export { type AlertsReport, type CreateObservabilityOptions, createObservability, type Observability } from './observability.js';
export { type GatewaySources, type ObserverSinks, observeGateway, observeWorkflow } from './observe.js';
export { ensureRequestId, REQUEST_ID_HEADER, requestIdFrom } from './requestId.js';
export { UsageMetrics, type UsageMetricsOptions } from './usage/usageMetrics.js';
export {
  type UsageCountsJson,
  type UsageGroupTotals,
  UsageQuery,
  type UsageQueryOptions,
  type UsageReport,
  type UsageSeriesPoint,
  usageCsv,
} from './usage/usageQuery.js';
export { type CountedRequest, type RequestEndSource, UsageRecorder, type UsageRecorderOptions } from './usage/usageRecorder.js';
export {
  MemoryUsageStore,
  USAGE_GROUP_BYS,
  type UsageBucket,
  type UsageCounts,
  type UsageDimensions,
  type UsageGroupBy,
  type UsageRollup,
  type UsageSeriesQuery,
  type UsageStore,
} from './usage/usageStore.js';
