/**
 * @module @switchyard/observability/tracing
 * OpenTelemetry tracing for the gateway and the workflow service: a span
 * per client request with children for selection and each upstream
 * attempt, W3C trace-context in and out, exported over OTLP, to Jaeger
 * (its OTLP endpoint) or to Zipkin. A separate entry point, so that only
 * processes that trace load OpenTelemetry.
 */
export { GatewayTracer, type GatewayTracerOptions } from './gatewayTracer.js';
export { type CreateTracingOptions, createTracing, type ExporterOptions, exporterFor, type Tracing } from './tracing.js';
export { WorkflowTracer } from './workflowTracer.js';
