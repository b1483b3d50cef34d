/**
 * @module observability
 * Everything from one config block: the metrics registry and its listener,
 * the logger, the alert manager with its notifiers, and credential-rotation
 * notices, ready to attach to the gateway's or the workflow service's
 * emitters. Tracing lives in `@switchyard/observability/tracing` (so
 * OpenTelemetry loads only when wanted) and plugs in as an observer.
 */
import type { lookup as dnsLookup } from 'node:dns';
import { type Scheduler, systemScheduler } from '@switchyard/runtime';
import type { DestinationStream, Logger } from 'pino';
import { Registry } from 'prom-client';
import type { Dispatcher } from 'undici';
import { AlertManager, type AlertsStatus } from './alerts/alertManager.js';
import { type ObservabilityConfig, type ObservabilityConfigInput, observabilityConfigSchema } from './config/schemas.js';
import type { EventObserver, EventSource } from './events.js';
import { createLogger } from './logging/logger.js';
import { GatewayMetrics, type GatewayMetricsOptions } from './metrics/gatewayMetrics.js';
import { MetricsServer } from './metrics/metricsServer.js';
import { collectProcessMetrics } from './metrics/processMetrics.js';
import { WebsocketMetrics } from './metrics/websocketMetrics.js';
import { WorkflowMetrics } from './metrics/workflowMetrics.js';
import type { DeliveryRecord, NotificationDispatcher } from './notify/dispatcher.js';
import { dispatcherFromConfig } from './notify/fromConfig.js';
import { RotationNotifier } from './notify/rotationNotifier.js';
import { type GatewaySources, observeGateway, observeWorkflow } from './observe.js';

/** Options of {@link createObservability}. */
export interface CreateObservabilityOptions {
  scheduler?: Scheduler;
  /** Configured providers: kept as labels, and evaluated by per-provider rules from the start. */
  knownProviders?: string[];
  /** Configured models: kept as labels. */
  knownModels?: string[];
  /** Per-1,000-token prices by provider, for `svc_cost_total` (see `GatewayMetricsOptions.tokenPrice`). */
  tokenPrice?: GatewayMetricsOptions['tokenPrice'];
  /** Log destination overriding `logging.output` (tests, embedding). */
  logDestination?: DestinationStream;
  /** A logger to use instead of building one from `logging`. */
  logger?: Logger;
  /** The tracer from `@switchyard/observability/tracing`, if tracing is on. */
  tracing?: EventObserver;
  /** `service` on every log line and pager `source` (default `switchyard`). */
  serviceName?: string;
  /** undici dispatcher for webhook and pager calls. */
  httpDispatcher?: Dispatcher;
  /** The lookup e-mail notifications resolve the SMTP server's host with, at each connection (default: nodemailer's own). */
  smtpLookup?: typeof dnsLookup;
}

/** What `GET /v0/operations/alerts` serves. */
export interface AlertsReport extends AlertsStatus {
  enabled: boolean;
  /** The latest notification outcomes, newest last. */
  notifications: DeliveryRecord[];
}

/** The assembled pieces. */
export interface Observability {
  config: ObservabilityConfig;
  /** svc_* metrics (and process metrics) of this process; `undefined` when `metrics.enabled` is false. */
  registry: Registry | undefined;
  gatewayMetrics: GatewayMetrics | undefined;
  /** The gateway's websocket connections and messages; `undefined` when `metrics.enabled` is false. */
  websocketMetrics: WebsocketMetrics | undefined;
  workflowMetrics: WorkflowMetrics | undefined;
  metricsServer: MetricsServer | undefined;
  logger: Logger;
  /** `undefined` when `alerts.enabled` is false. */
  alerts: AlertManager | undefined;
  dispatcher: NotificationDispatcher;
  /** Subscribes to the gateway's emitters; returns the detach function. */
  observeGateway(sources: GatewaySources): () => void;
  /** Subscribes to the workflow service's emitter; returns the detach function. */
  observeWorkflow(source: EventSource): () => void;
  /** The alert report for the operations API. */
  alertsReport(): AlertsReport;
  /** Starts the metrics listener and the alert loop. */
  start(): Promise<void>;
  /** Stops both, closes notifiers and flushes the log. */
  stop(): Promise<void>;
}

/**
 * Builds observability from the five config sections.
 *
 * @example
 * ```ts
 * const obs = createObservability({ metrics: { port: 9090 }, logging: { level: 'info' } }, { knownProviders: ['openai'] });
 * const detach = obs.observeGateway({ relay: relay.events, health: health.events });
 * await obs.start();
 * ```
 */
export function createObservability(
  input: ObservabilityConfigInput | ObservabilityConfig,
  options: CreateObservabilityOptions = {},
): Observability {
  const config = observabilityConfigSchema.parse(input);
  const scheduler = options.scheduler ?? systemScheduler;
  const serviceName = options.serviceName ?? 'switchyard';
  const logHandle = options.logger
    ? undefined
    : createLogger(config.logging, {
        clock: scheduler,
        base: { service: serviceName },
        ...(options.logDestination ? { destination: options.logDestination } : {}),
      });
  const logger = options.logger ?? logHandle!.logger;

  let registry: Registry | undefined;
  let gatewayMetrics: GatewayMetrics | undefined;
  let websocketMetrics: WebsocketMetrics | undefined;
  let workflowMetrics: WorkflowMetrics | undefined;
  let metricsServer: MetricsServer | undefined;
  if (config.metrics.enabled) {
    registry = new Registry();
    if (config.metrics.process_metrics) collectProcessMetrics(registry);
    gatewayMetrics = new GatewayMetrics({
      registry,
      clock: scheduler,
      maxLabelValues: config.metrics.max_label_values,
      ...(options.knownModels ? { knownModels: options.knownModels } : {}),
      ...(options.knownProviders ? { knownProviders: options.knownProviders } : {}),
      ...(options.tokenPrice ? { tokenPrice: options.tokenPrice } : {}),
    });
    websocketMetrics = new WebsocketMetrics({ registry });
    workflowMetrics = new WorkflowMetrics({ registry, maxLabelValues: config.metrics.max_label_values });
    metricsServer = new MetricsServer({
      registries: registry,
      port: config.metrics.port,
      host: config.metrics.host,
      path: config.metrics.path,
    });
  }

  const dispatcher = dispatcherFromConfig(config.notifications, {
    scheduler,
    logger,
    source: serviceName,
    ...(registry ? { registry } : {}),
    ...(options.httpDispatcher ? { httpDispatcher: options.httpDispatcher } : {}),
    ...(options.smtpLookup ? { smtpLookup: options.smtpLookup } : {}),
  });
  const alerts = config.alerts.enabled
    ? new AlertManager({
        rules: config.alerts.rules,
        scheduler,
        evaluationIntervalMs: config.alerts.evaluation_interval,
        dispatcher,
        logger,
        source: serviceName,
        ...(registry ? { registry } : {}),
        ...(options.knownProviders ? { knownProviders: options.knownProviders } : {}),
      })
    : undefined;
  const rotation = config.notifications.credential_rotation;
  const rotationNotifier = rotation.enabled
    ? new RotationNotifier({ dispatcher, channels: rotation.channels, minIntervalMs: rotation.min_interval, clock: scheduler })
    : undefined;

  const sinks = {
    logger,
    ...(alerts ? { alerts } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
  };

  return {
    config,
    registry,
    gatewayMetrics,
    websocketMetrics,
    workflowMetrics,
    metricsServer,
    logger,
    alerts,
    dispatcher,
    observeGateway: (sources) =>
      observeGateway(sources, {
        ...sinks,
        ...(gatewayMetrics ? { metrics: gatewayMetrics } : {}),
        ...(rotationNotifier ? { notifications: rotationNotifier } : {}),
        ...(websocketMetrics ? { observers: [websocketMetrics] } : {}),
      }),
    observeWorkflow: (source) => observeWorkflow(source, { ...sinks, ...(workflowMetrics ? { metrics: workflowMetrics } : {}) }),
    alertsReport: () => ({
      enabled: alerts !== undefined,
      ...(alerts?.status() ?? { evaluation_interval_ms: config.alerts.evaluation_interval, evaluated_at: null, rules: [] }),
      notifications: dispatcher.recent(),
    }),
    async start() {
      await metricsServer?.listen();
      alerts?.start();
    },
    async stop() {
      alerts?.stop();
      await metricsServer?.close();
      await dispatcher.close();
      await logHandle?.close();
    },
  };
}
