/**
 * @module tracing
 * An OpenTelemetry tracer provider from `tracing.*`: the exporter (OTLP
 * over HTTP, Jaeger through its OTLP endpoint, or Zipkin), the sample rate
 * (parent-based, so a request that arrives sampled stays sampled), and the
 * service name. The provider is not registered globally: a library should
 * not take over the process's tracing.
 */
import type { lookup as dnsLookup } from 'node:dns';
import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ZipkinExporter } from '@opentelemetry/exporter-zipkin';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { type Clock, systemClock } from '@switchyard/runtime';
import type { TracingConfig } from '../config/schemas.js';
import { ConnectingZipkinExporter } from './connectingZipkinExporter.js';
import { GatewayTracer } from './gatewayTracer.js';
import { WorkflowTracer } from './workflowTracer.js';

/** Options of {@link createTracing}. */
export interface CreateTracingOptions {
  /** Replaces the configured exporter (an `InMemorySpanExporter` in tests). */
  exporter?: SpanExporter;
  /** `batch` (default) queues spans and exports in the background; `simple` exports each span as it ends. */
  processor?: 'batch' | 'simple';
  clock?: Clock;
  /** `service.version` on the resource. */
  serviceVersion?: string;
  /** The lookup the exporter resolves the collector's host with at each new connection (see {@link ExporterOptions}). */
  lookup?: typeof dnsLookup;
}

/** Options of {@link exporterFor}. */
export interface ExporterOptions {
  /**
   * Resolves the collector's host at each new connection (`dns.lookup`'s shape); an error it gives fails
   * that export before a byte is sent. Default: the system resolver.
   */
  lookup?: typeof dnsLookup;
}

/** A tracer provider and the observers built on it. */
export interface Tracing {
  provider: TracerProvider;
  tracer: Tracer;
  /** Observer of relay events (pass as `tracing` to observeGateway). */
  gateway: GatewayTracer;
  /** Observer of workflow events (pass as `tracing` to observeWorkflow). */
  workflow: WorkflowTracer;
  /** Exports every finished span now. */
  flush(): Promise<void>;
  /** Flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

/**
 * The exporter `tracing.exporter` names.
 *
 * @example
 * ```ts
 * exporterFor(tracingConfigSchema.parse({ exporter: 'zipkin' })); // ZipkinExporter to http://127.0.0.1:9411/api/v2/spans
 * ```
 */
export function exporterFor(config: TracingConfig, options: ExporterOptions = {}): SpanExporter {
  const { lookup } = options;
  if (config.exporter === 'zipkin') {
    const zipkin = { url: config.endpoint, serviceName: config.service_name, headers: config.headers };
    return lookup ? new ConnectingZipkinExporter({ ...zipkin, lookup }) : new ZipkinExporter(zipkin);
  }
  // Jaeger ingests OTLP natively (since 1.35), so `jaeger` is OTLP to Jaeger's endpoint. Agent options
  // reach each connection (keepAlive is the exporter's own default, which options given replace).
  return new OTLPTraceExporter({
    url: config.endpoint,
    headers: config.headers,
    ...(lookup ? { httpAgentOptions: { keepAlive: true, lookup } } : {}),
  });
}

/**
 * Builds tracing from the `tracing` config section.
 *
 * @example
 * ```ts
 * import { createTracing } from '@switchyard/observability/tracing';
 * const tracing = createTracing(tracingConfigSchema.parse({ enabled: true, sample_rate: 0.1 }));
 * const obs = createObservability(config, { tracing: tracing.gateway });
 * ```
 */
export function createTracing(config: TracingConfig, options: CreateTracingOptions = {}): Tracing {
  const exporter = options.exporter ?? exporterFor(config, options.lookup ? { lookup: options.lookup } : {});
  const processor = options.processor === 'simple' ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: config.service_name,
      ...(options.serviceVersion ? { 'service.version': options.serviceVersion } : {}),
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sample_rate) }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('@switchyard/observability');
  return {
    provider,
    tracer,
    gateway: new GatewayTracer(tracer, { clock: options.clock ?? systemClock }),
    workflow: new WorkflowTracer(tracer),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
