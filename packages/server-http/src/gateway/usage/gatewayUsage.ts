/**
 * @module gatewayUsage
 * The gateway's usage accounting, wired: the store (`auth-dir/.usage.sqlite`
 * for one node, the cluster's PostgreSQL for several), the recorder on the
 * relay's `request:end`, the bounded `svc_tenant_*` / `svc_client_key_*`
 * metrics, the query behind `GET /v0/management/usage`, and retention: rows
 * older than `usage.retention` are deleted at start and every hour.
 */
import { join } from 'node:path';
import {
  type RequestEndSource,
  type TokenPrice,
  UsageMetrics,
  UsageQuery,
  UsageRecorder,
  type UsageStore,
} from '@switchyard/observability';
import { every, type Scheduler } from '@switchyard/runtime';
import type { Registry } from 'prom-client';
import type { GatewayCluster } from '../cluster.js';
import type { GatewayConfig } from '../config/schema.js';
import { resolveAuthDir } from '../credentials.js';
import { PostgresUsageStore } from './postgresUsageStore.js';
import { SqliteUsageStore } from './sqliteUsageStore.js';

/** The file in `auth-dir` where a gateway outside a cluster keeps its usage. */
export const USAGE_FILE = '.usage.sqlite';

/** How often rows past `usage.retention` are looked for. */
export const RETENTION_CHECK_INTERVAL_MS = 3_600_000;

/** Opens the usage store a config asks for: the cluster's when there is one, else SQLite beside the credentials. */
export async function openUsageStore(
  config: GatewayConfig,
  configPath: string | undefined,
  cluster: GatewayCluster | undefined,
): Promise<UsageStore> {
  if (cluster) return PostgresUsageStore.open(cluster.pool, cluster.nodeId);
  return SqliteUsageStore.open(join(resolveAuthDir(config['auth-dir'], configPath), USAGE_FILE));
}

/** Logger subset usage writes to. */
interface UsageLogger {
  warn(object: object, message: string): void;
}

/** Options of {@link GatewayUsage}. */
export interface GatewayUsageOptions {
  store: UsageStore;
  scheduler: Scheduler;
  /** The config in force (prices and retention are read from it as they change). */
  config: () => GatewayConfig;
  /** The metrics registry (`metrics.enabled`), else undefined: no usage metrics. */
  registry: Registry | undefined;
  logger: UsageLogger;
}

/**
 * Usage accounting of one gateway.
 *
 * @example
 * ```ts
 * const usage = new GatewayUsage({ store: await openUsageStore(config, path, undefined), scheduler, config: () => config, registry, logger });
 * usage.start(relay.events);
 * const report = await usage.query.report({ from, to, groupBy: 'tenant', stepMs: 3_600_000 });
 * await usage.close();
 * ```
 */
export class GatewayUsage {
  readonly store: UsageStore;
  readonly recorder: UsageRecorder;
  readonly query: UsageQuery;
  readonly metrics: UsageMetrics | undefined;
  private detach: (() => void) | undefined;
  private stopRetention: (() => void) | undefined;

  constructor(private readonly options: GatewayUsageOptions) {
    const start = options.config();
    this.store = options.store;
    this.metrics = options.registry
      ? new UsageMetrics({
          registry: options.registry,
          maxKeyLabels: start.usage.metrics.max_key_labels,
          maxTenantLabels: start.metrics.max_label_values,
        })
      : undefined;
    const metrics = this.metrics;
    this.recorder = new UsageRecorder({
      store: options.store,
      scheduler: options.scheduler,
      flushIntervalMs: start.usage.flush_interval,
      // Read per request: a reload's prices apply at once, as for svc_cost_total.
      tokenPrice: (provider): TokenPrice | undefined => options.config().providers[provider]?.cost_per_1k_tokens,
      ...(metrics ? { onCounted: (request) => metrics.count(request) } : {}),
      onFlushError: (error, rows) => options.logger.warn({ err: (error as Error).message, rows }, 'usage_flush_failed'),
    });
    // A report includes this node's latest counts: what is in memory is written first.
    this.query = new UsageQuery({ store: options.store, beforeRead: () => this.recorder.flush() });
  }

  /** Subscribes to the relay's events and starts the retention pass. */
  start(relayEvents: RequestEndSource): void {
    this.detach = this.recorder.attach(relayEvents);
    void this.prune();
    this.stopRetention = every(this.options.scheduler, RETENTION_CHECK_INTERVAL_MS, () => this.prune());
  }

  /** Deletes rollups older than `usage.retention`; resolves to how many rows went (0 when it failed, which is logged). */
  async prune(): Promise<number> {
    const before = this.options.scheduler.now() - this.options.config().usage.retention;
    try {
      return await this.store.prune(before);
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'usage_prune_failed');
      return 0;
    }
  }

  /** Stops listening, writes what is counted (nothing is lost on a clean shutdown), and closes the store. */
  async close(): Promise<void> {
    this.detach?.();
    this.stopRetention?.();
    await this.recorder.close();
    await this.store.close();
  }
}
