/**
 * @module processMetrics
 * Node process metrics (`process_*`, `nodejs_*`) from prom-client, minus
 * the three that Prometheus' own linter rejects: prom-client exposes
 * `nodejs_active_{handles,requests,resources}_total` as gauges, and a
 * `_total` suffix is reserved for counters, so `promtool check metrics`
 * fails on them. Their per-type gauges (`nodejs_active_handles{type}`, ...)
 * stay, and sum to the same number.
 */
import { collectDefaultMetrics, type Registry } from 'prom-client';

const NON_COMPLIANT = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * Registers the process metrics on `registry`.
 *
 * @example
 * ```ts
 * const registry = new Registry();
 * collectProcessMetrics(registry);
 * ```
 */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of NON_COMPLIANT) registry.removeSingleMetric(name);
}
