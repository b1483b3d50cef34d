/**
 * @module healthTypes
 * The public shapes of a `HealthMonitor`: settings, the probe it calls, its
 * typed events, and the records the operations API serves.
 */
import type { Scheduler } from '@switchyard/runtime';

/** `server.operations.health_check`. */
export interface HealthSettings {
  /** Periodic probing. Default true. When false, every provider counts as healthy. */
  enabled?: boolean;
  /** Between two rounds of probes. Default 30,000. */
  intervalMs?: number;
  /** A probe still running after this fails (its signal is aborted). Default 10,000. */
  timeoutMs?: number;
  /** Failed probes in a row that make a healthy provider unhealthy. Default 3. */
  unhealthyThreshold?: number;
  /** Passed probes in a row that make an unhealthy provider healthy. Default 2. */
  healthyThreshold?: number;
}

/**
 * Probes one provider: resolves when it is healthy, throws (or rejects)
 * when not. The server builds it from `providers.<p>.health_check`
 * (`endpoint`, `method`); the signal aborts at the timeout. Error messages
 * end up in events and status, so they must not contain secrets.
 */
export type HealthProbe = (provider: string, signal: AbortSignal) => Promise<void>;

export type HealthStatus = 'healthy' | 'unhealthy';

/** The internal health record of one provider. Times are ISO 8601. */
export interface HealthRecord {
  provider: string;
  status: HealthStatus;
  last_check: string | null;
  last_success: string | null;
  /** Failed probes in a row (0 after a pass). */
  error_count: number;
  /** Message of the last failed probe, while failures continue. */
  last_error: string | null;
}

/** Every provider's record and a verdict. */
export interface HealthAggregate {
  providers: Record<string, HealthRecord>;
  /** `healthy` when all are, `unhealthy` when none is (or there are none), otherwise `degraded`. */
  overall: 'healthy' | 'degraded' | 'unhealthy';
  timestamp: string;
}

/** The provider status record of the operations API. */
export interface ProviderStatusRecord {
  provider: string;
  status: HealthStatus;
  in_cooldown: boolean;
  last_check: string | null;
  /** Share of the last 24 hours (hourly resolution) spent healthy. */
  uptime_percent: number;
  requests_last_minute: number;
  errors_last_minute: number;
  /** Mean latency of the requests of the last minute; null without any. */
  average_latency_ms: number | null;
}

/** The outcome of one probe. */
export interface HealthCheckResult {
  provider: string;
  ok: boolean;
  latencyMs: number;
  error?: string;
  at: number;
  /** The record after this probe. */
  record: HealthRecord;
}

/** The typed events of a `HealthMonitor`. */
export interface HealthEvents {
  'health:change': (event: { provider: string; status: HealthStatus; previous: HealthStatus; at: number }) => void;
  'health:check': (event: { provider: string; ok: boolean; latencyMs: number; error?: string; at: number }) => void;
}

/** Options of `HealthMonitor`. */
export interface HealthMonitorOptions {
  /** Default `systemScheduler`. */
  scheduler?: Scheduler;
  settings?: HealthSettings;
  providers: string[];
  probe: HealthProbe;
  /** Read for `in_cooldown` in the status record. */
  cooldowns?: { isCooling(key: string): boolean };
}
