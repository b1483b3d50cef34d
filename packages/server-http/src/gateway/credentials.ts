/**
 * @module credentials
 * The gateway's credentials: the file store in `auth-dir` (encrypted as
 * `auth.encryption` says), quota usage beside it, the refresh worker, the
 * sign-in flows, all from `@switchyard/credentials`; plus the small glue
 * the relay and the routes need (a pool only for providers that have
 * credentials, each provider's remaining quota fed to the routing table for
 * the `quota_aware` strategy, and the time of each credential's last
 * refresh for `/auth-files`).
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import {
  type AuthConfig,
  type CredentialManager,
  type OpenCredentialsOptions,
  type OpenedCredentials,
  openCredentials,
} from '@switchyard/credentials';
import type { RelayCredential, RelayCredentialPool } from '@switchyard/relay';
import type { Scheduler } from '@switchyard/runtime';
import type { GatewayConfig } from './config/schema.js';
import { configuredFlows, flowKinds } from './flows.js';

/** Where remaining quota goes (the relay's `RoutingTable`). */
export interface QuotaSink {
  setRemainingQuota(provider: string, remaining: number | undefined): void;
}

/** `auth-dir`, a relative one read from the config file's directory (or the working directory without a file). */
export function resolveAuthDir(authDir: string, configPath: string | undefined): string {
  return configPath && !isAbsolute(authDir) ? resolve(dirname(configPath), authDir) : authDir;
}

/** `providers.<p>.quota`, as the credentials package reads it. */
export function providerQuotas(config: GatewayConfig): Record<string, { quota?: { limit?: number; reset?: 'daily' | 'monthly' } }> {
  return Object.fromEntries(
    Object.entries(config.providers).map(([name, p]) => [name, p.quota ? { quota: { limit: p.quota.limit, reset: p.quota.reset } } : {}]),
  );
}

/** The credentials side of a running gateway. */
export class GatewayCredentials {
  readonly manager: CredentialManager;
  readonly opened: OpenedCredentials;
  /** The kind of each sign-in flow, as registered at start (flows change with a restart). */
  readonly flowKinds: ReadonlyMap<string, 'device-code' | 'code-assistant' | 'cloud-coding-assistant'>;
  /** When each credential was last refreshed by this process (ISO 8601). */
  private readonly refreshedAt = new Map<string, string>();

  private constructor(opened: OpenedCredentials, scheduler: Scheduler, kinds: GatewayCredentials['flowKinds']) {
    this.opened = opened;
    this.flowKinds = kinds;
    this.manager = opened.manager;
    this.manager.events.on('refresh:success', (event) => {
      this.refreshedAt.set(event.credentialId, new Date(scheduler.now()).toISOString());
    });
  }

  /** Opens the store in `auth-dir` (or runs on the cluster's shared `stores`) and starts the manager. */
  static async open(
    config: GatewayConfig,
    options: {
      scheduler: Scheduler;
      configPath?: string | undefined;
      stores?: OpenCredentialsOptions['stores'];
      /** `cluster.node_id`: the owner of this node's sign-ins in the cluster's directory. */
      nodeId?: string | undefined;
      flows?: OpenCredentialsOptions['flows'];
      /** The client of the sign-in and refresh flows (the gateway's: through the DNS-rebinding guard). */
      http?: OpenCredentialsOptions['http'];
    },
  ): Promise<GatewayCredentials> {
    const batching = config.server.operations.batch_processing;
    const opened = await openCredentials({
      // Quota usage, the store write every request with tokens makes, goes out in batches off the request path:
      // `batch_processing.max_batch_size` requests' usage, or `timeout` after the first (each on its own when
      // batching is off). Several nodes spend one quota: each learns the others' use from the store's answer to
      // its own write, so there the interval is `cluster.quota_flush_interval` (default: at once).
      quotaFlushIntervalMs: config.cluster.enabled ? config.cluster.quota_flush_interval : batching.enabled ? batching.timeout : 0,
      quotaFlushBatchSize: batching.enabled ? batching.max_batch_size : 1,
      ...(config.cluster.enabled
        ? {
            quotaReservationTtlMs: config.cluster.quota_reservation_ttl,
            quotaAdmissionTimeoutMs: config.cluster.quota_admission_timeout,
          }
        : {}),
      ...(options.stores ? { stores: options.stores } : {}),
      ...(options.nodeId ? { nodeId: options.nodeId } : {}),
      authDir: resolveAuthDir(config['auth-dir'], options.configPath),
      auth: config.auth as AuthConfig,
      providers: providerQuotas(config),
      // Flows are registered once: a provider's `oauth` block changes with a restart. An embedder's own come after.
      flows: [...configuredFlows(config), ...(options.flows ?? [])],
      scheduler: options.scheduler,
      ...(options.http ? { http: options.http } : {}),
    });
    return new GatewayCredentials(opened, options.scheduler, flowKinds(config));
  }

  /**
   * The relay's view: a provider's pool when it has credentials, else
   * nothing (so a keyless provider, such as a local model server, is called
   * without one, and a provider that needs one answers `no_credentials`).
   */
  relayPools(): { pool(provider: string): RelayCredentialPool | undefined } {
    return {
      pool: (provider) => {
        const pool = this.manager.pool(provider);
        return pool.size > 0 ? pool : undefined;
      },
    };
  }

  /** A credential for a health probe, without counting it as a request. */
  probeCredential(provider: string): RelayCredential | undefined {
    return this.manager.pool(provider).peek();
  }

  /** A provider's remaining quota (its limit, or its credentials' limits, less their usage); undefined when unlimited. */
  remainingQuota(provider: string): number | undefined {
    // The pool's own figure: the manager's `quota()` also builds every credential's status record, too much per request.
    const pool = this.manager.pool(provider);
    // A provider without credentials has no usage tracked here: no figure rather than 0.
    return pool.size === 0 ? undefined : (pool.quota().remaining ?? undefined);
  }

  /** Gives the routing table every provider's remaining quota now. */
  syncQuota(table: QuotaSink, providers: readonly string[]): void {
    for (const provider of providers) table.setRemainingQuota(provider, this.remainingQuota(provider));
  }

  /**
   * Keeps the routing table's remaining quota per provider in step with the
   * credentials' usage and membership, so `quota_aware` selection
   * between providers sees it. Returns the unsubscribe.
   */
  feedQuota(table: QuotaSink, providers: () => readonly string[]): () => void {
    const onChange = (event: { provider: string }) => table.setRemainingQuota(event.provider, this.remainingQuota(event.provider));
    // Usage changes the figure, and so do credentials joining or leaving (their limits count).
    const events = ['quota:update', 'credential:upsert', 'credential:delete'] as const;
    for (const name of events) this.manager.events.on(name, onChange);
    this.syncQuota(table, providers());
    return () => {
      for (const name of events) this.manager.events.off(name, onChange);
    };
  }

  /** When a credential was last refreshed here, or null. */
  lastRefresh(id: string): string | null {
    return this.refreshedAt.get(id) ?? null;
  }

  /** Applies `auth.*` and the provider quotas of a reloaded config. */
  configure(config: GatewayConfig): void {
    const auth = config.auth as AuthConfig;
    this.manager.configure({
      strategy: auth.selection_strategy,
      quotaResetSchedule: auth.quota.reset_schedule,
      providers: providerQuotas(config),
      refresh: { enabled: auth.refresh.enabled, checkIntervalMs: auth.refresh.check_interval, leadTimeMs: auth.refresh.refresh_lead_time },
    });
  }

  close(): Promise<void> {
    return this.opened.close();
  }
}
