/**
 * @module openTracing
 * The gateway's tracer. OpenTelemetry is an optional peer of the
 * observability package, so it is imported here only when `tracing.enabled`
 * asks for it, and a missing install refuses the start with the packages to add.
 */

import type { Tracing } from '@switchyard/observability/tracing';
import type { Scheduler } from '@switchyard/runtime';
import type { LookupFunction } from '../controlPlane/ssrf.js';
import type { GatewayConfig } from './config/schema.js';

/** Refused start-up: `tracing.enabled` without the OpenTelemetry packages installed. */
export class TracingUnavailableError extends Error {
  override name = 'TracingUnavailableError';
}

/**
 * The tracer `tracing.*` asks for, or undefined when tracing is off. OpenTelemetry is an optional
 * peer of the observability package, so it is loaded only here, and only when wanted.
 */
export async function openTracing(config: GatewayConfig, scheduler: Scheduler, lookup: LookupFunction): Promise<Tracing | undefined> {
  if (!config.tracing.enabled) return undefined;
  let tracingModule: typeof import('@switchyard/observability/tracing');
  try {
    tracingModule = await import('@switchyard/observability/tracing');
  } catch (error) {
    throw new TracingUnavailableError(
      `tracing.enabled needs the OpenTelemetry packages (${(error as Error).message}): install @opentelemetry/api @opentelemetry/core ` +
        '@opentelemetry/resources @opentelemetry/sdk-trace @opentelemetry/semantic-conventions ' +
        '@opentelemetry/exporter-trace-otlp-http @opentelemetry/exporter-zipkin',
      { cause: error },
    );
  }
  return tracingModule.createTracing(config.tracing, { clock: scheduler, lookup });
}
