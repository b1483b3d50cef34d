/**
 * @module cluster
 * `cluster.enabled`: the node's credential store, quota store, refresh lock,
 * cooldown state store and sign-in directory on one shared PostgreSQL
 * database, so that N gateway nodes behave as one. This module opens them on one pool (the
 * refresh lock holds session locks, so it has a small pool of its own),
 * reports their state (`GET /v0/operations/cluster/status`, `svc_cluster_*`
 * metrics), and carries the `config.reload` signal. The stores themselves
 * live in `@switchyard/credentials/postgres` and
 * `@switchyard/core-routing/postgres`, except the hosts the management API
 * admitted (`PostgresGuardedHostStore`, on this package's own migrations).
 */
import { hostname } from 'node:os';
import { PostgresCooldownStateStore } from '@switchyard/core-routing/postgres';
import type { AdmissionCounts } from '@switchyard/credentials';
import {
  type AuthEventCorrelation,
  type ConfigReloadEvent,
  PostgresCredentialStore,
  PostgresQuotaStore,
  PostgresRefreshLock,
  PostgresSignInDirectory,
} from '@switchyard/credentials/postgres';
import pg from 'pg';
import { Counter, Gauge, type Registry } from 'prom-client';
import { ConfigError } from './config/load.js';
import type { GatewayConfig } from './config/schema.js';
import { PostgresGuardedHostStore } from './postgresGuardedHostStore.js';

/** The last cross-node event this node applied. */
export interface ClusterLastEvent {
  event_id: string;
  event_type: string;
  auth_id: string | null;
  revision: number | null;
  origin_node_id: string;
  /** When this node applied it (ISO 8601). */
  applied_at: string;
}

/** `GET /v0/operations/cluster/status`. */
export interface ClusterStatus {
  enabled: true;
  node_id: string;
  listeners: {
    auth_events: { channel: string; connected: boolean; reconnects: number };
    cooldowns: { channel: string; connected: boolean; reconnects: number };
    quota: { channel: string; connected: boolean; reconnects: number };
    /** Cancel requests for this node's sign-ins. */
    sign_ins: { channel: string; connected: boolean; reconnects: number };
  };
  last_event: ClusterLastEvent | null;
  events: { received: number; applied: number; invalid: number; duplicates: number; stale: number; own: number };
  reconcile: { runs: number; repaired: number; last_at: string | null; interval_ms: number };
  cooldown_invalid_notifications: number;
  /**
   * Quota admissions of this node, by outcome: PostgreSQL's answers (admitted, refused, failed), and requests let
   * through without asking it to the end (stalled: no answer in time; skipped: within the backoff after either).
   */
  quota_admissions: { admitted: number; refused: number; failed: number; stalled: number; skipped: number };
  /** `config.reload` signals heard from other nodes. */
  config_reload_signals: number;
}

/** Where a node's clock comes from (the gateway's scheduler). */
interface ClusterClock {
  now(): number;
}

/** Logger subset the cluster writes to. */
interface ClusterLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/** The cluster's stores could not be opened (PostgreSQL unreachable, a migration failed). */
export class ClusterUnavailableError extends Error {
  override name = 'ClusterUnavailableError';
  readonly code = 'cluster_unavailable';
}

/** The database URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(cluster.database_url)';
  }
}

interface LogRelay {
  to: ClusterLogger | undefined;
}

/**
 * The shared stores of one gateway node.
 *
 * @example
 * ```ts
 * const cluster = await GatewayCluster.open(config, { clock: Date });
 * const credentials = await openCredentials({ auth: config.auth, stores: cluster.credentialStores() });
 * console.log(cluster.status().listeners.auth_events.connected);
 * await cluster.close();
 * ```
 */
export class GatewayCluster {
  private lastEvent: ClusterLastEvent | null = null;
  private lastReconcileAt: string | null = null;
  private configReloadSignals = 0;
  /** The admissions the credential manager decided without PostgreSQL's answer; none until `useAdmissionCounts`. */
  private admissionCounts: () => AdmissionCounts = () => ({ stalled: 0, skipped: 0 });

  private constructor(
    readonly nodeId: string,
    private readonly settings: GatewayConfig['cluster'],
    /** The shared pool (the usage store writes on it too); closed by `close()`. */
    readonly pool: pg.Pool,
    readonly credentialStore: PostgresCredentialStore,
    readonly quotaStore: PostgresQuotaStore,
    readonly refreshLock: PostgresRefreshLock,
    readonly cooldownStore: PostgresCooldownStateStore,
    readonly signInDirectory: PostgresSignInDirectory,
    /** The hosts the management API admitted on any node (DNS-rebinding guard). */
    readonly guardedHostStore: PostgresGuardedHostStore,
    private readonly clock: ClusterClock,
    private readonly log: LogRelay,
  ) {
    const bus = credentialStore.bus;
    bus.events.on('applied', (event) => {
      this.lastEvent = {
        event_id: event.event_id,
        event_type: event.event_type,
        auth_id: event.subject.auth_id,
        revision: event.mutation.revision ?? null,
        origin_node_id: event.origin.node_id,
        applied_at: new Date(this.clock.now()).toISOString(),
      };
    });
    bus.onConfigReload(() => {
      this.configReloadSignals++;
    });
    bus.events.on('reconciled', () => {
      this.lastReconcileAt = new Date(this.clock.now()).toISOString();
    });
  }

  /** Opens the node's shared stores (applying migrations) on `cluster.database_url`. */
  static async open(config: GatewayConfig, options: { clock: ClusterClock }): Promise<GatewayCluster> {
    // The stores open before the gateway's logger exists; their complaints reach it once `useLogger` is called.
    const log: LogRelay = { to: undefined };
    const logger: ClusterLogger = {
      info: (object, message) => log.to?.info(object, message),
      warn: (object, message) => log.to?.warn(object, message),
    };
    const settings = config.cluster;
    const nodeId = settings.node_id || hostname();
    const connection = settings.database_url;
    const key = config.auth.encryption.key;
    if (!config.auth.encryption.enabled || !key) {
      // parseConfig refuses this already; a config built by hand meets the same rule here.
      throw new ConfigError('(cluster)', [
        { field: 'auth.encryption.enabled', message: 'the cluster keeps secrets in PostgreSQL encrypted: set auth.encryption' },
      ]);
    }
    // TCP keep-alive finds a connection that died silently in minutes, not at the kernel's retransmission limit.
    const pool = new pg.Pool({
      connectionString: connection,
      max: settings.pool_size,
      application_name: `switchyard-${nodeId}`,
      keepAlive: true,
    });
    // An idle pooled connection that drops (a database restart) must not crash the node; the next query reconnects.
    pool.on('error', (error) => logger.warn({ err: error.message }, 'cluster_pool_connection_lost'));
    const opened: { close(): Promise<void> }[] = [];
    try {
      const credentialStore = await PostgresCredentialStore.open({
        connection,
        pool,
        nodeId,
        encryption: { key, previousKeys: config.auth.encryption.previous_keys },
        events: {
          channel: settings.auth_events_channel,
          tenantId: settings.tenant_id,
          reconcileIntervalMs: settings.reconcile_interval,
          applicationName: `switchyard-auth-events-${nodeId}`,
          onInvalid: ({ reason }) => logger.warn({ reason }, 'cluster_invalid_auth_event'),
        },
      });
      opened.push(credentialStore);
      const quotaStore = await PostgresQuotaStore.open({
        connection,
        pool,
        channel: settings.quota_channel,
        applicationName: `switchyard-quota-${nodeId}`,
        onError: (error) => logger.warn({ err: error.message }, 'cluster_quota_listener_error'),
      });
      opened.push(quotaStore);
      const refreshLock = await PostgresRefreshLock.open({ connection, max: 2, namespace: settings.refresh_lock_namespace });
      opened.push(refreshLock);
      const cooldownStore = await PostgresCooldownStateStore.open({
        connection,
        pool,
        channel: settings.cooldown_channel,
        applicationName: `switchyard-cooldowns-${nodeId}`,
        // The same repair as the auth events': a notification lost without a reconnection is found by the next pass.
        resyncIntervalMs: settings.reconcile_interval,
        onError: (error) => logger.warn({ err: error.message }, 'cluster_cooldown_listener_error'),
      });
      opened.push(cooldownStore);
      const signInDirectory = await PostgresSignInDirectory.open({
        connection,
        pool,
        channel: settings.signin_channel,
        applicationName: `switchyard-sign-ins-${nodeId}`,
        onError: (error) => logger.warn({ err: error.message }, 'cluster_signin_listener_error'),
      });
      opened.push(signInDirectory);
      const guardedHostStore = await PostgresGuardedHostStore.open(pool, nodeId);
      logger.info({ node_id: nodeId }, 'cluster_joined');
      return new GatewayCluster(
        nodeId,
        settings,
        pool,
        credentialStore,
        quotaStore,
        refreshLock,
        cooldownStore,
        signInDirectory,
        guardedHostStore,
        options.clock,
        log,
      );
    } catch (error) {
      for (const store of opened.reverse()) await store.close().catch(() => undefined);
      await pool.end().catch(() => undefined);
      throw new ClusterUnavailableError(`cannot open the cluster's stores at ${redactUrl(connection)}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  /** Sends the stores' warnings (lost connections, invalid payloads) to `logger`. */
  useLogger(logger: ClusterLogger): void {
    this.log.to = logger;
    logger.info({ node_id: this.nodeId }, 'cluster_joined');
  }

  /** Where status and metrics read the admissions decided on this node (`CredentialManager.quotaAdmissions`). */
  useAdmissionCounts(read: () => AdmissionCounts): void {
    this.admissionCounts = read;
  }

  /** The stores `openCredentials` runs on. */
  credentialStores() {
    return {
      store: this.credentialStore,
      quotaStore: this.quotaStore,
      refreshLock: this.refreshLock,
      signInDirectory: this.signInDirectory,
    };
  }

  /** Runs `task` with `correlation` on every credential event its writes publish. */
  withCorrelation<T>(correlation: AuthEventCorrelation, task: () => T): T {
    return this.credentialStore.withCorrelation(correlation, task);
  }

  /** Tells the other nodes that this node's config changed (a signal only: each node reads its own file). */
  async publishConfigReload(correlation: AuthEventCorrelation): Promise<void> {
    await this.credentialStore.bus.publishConfigReload(correlation);
  }

  /** Subscribes to other nodes' `config.reload` signals. */
  onConfigReload(handler: (event: ConfigReloadEvent) => void): () => void {
    return this.credentialStore.bus.onConfigReload(handler);
  }

  status(): ClusterStatus {
    const stats = this.credentialStore.bus.stats();
    const auth = this.credentialStore.bus.listenerState;
    const cooldowns = this.cooldownStore.listenerState;
    const quota = this.quotaStore.listenerState;
    const signIns = this.signInDirectory.listenerState;
    return {
      enabled: true,
      node_id: this.nodeId,
      listeners: {
        auth_events: {
          channel: this.settings.auth_events_channel,
          connected: auth?.connected ?? false,
          reconnects: auth?.reconnects ?? 0,
        },
        cooldowns: {
          channel: this.settings.cooldown_channel,
          connected: cooldowns?.connected ?? false,
          reconnects: cooldowns?.reconnects ?? 0,
        },
        quota: {
          channel: this.settings.quota_channel,
          connected: quota?.connected ?? false,
          reconnects: quota?.reconnects ?? 0,
        },
        sign_ins: {
          channel: this.settings.signin_channel,
          connected: signIns?.connected ?? false,
          reconnects: signIns?.reconnects ?? 0,
        },
      },
      last_event: this.lastEvent,
      events: {
        received: stats.received,
        applied: stats.applied,
        invalid: stats.invalid,
        duplicates: stats.duplicates,
        stale: stats.stale,
        own: stats.own,
      },
      reconcile: {
        runs: stats.reconciliations,
        repaired: stats.repaired,
        last_at: this.lastReconcileAt,
        interval_ms: this.settings.reconcile_interval,
      },
      cooldown_invalid_notifications: this.cooldownStore.invalidNotifications,
      quota_admissions: { ...this.quotaStore.admissions, ...this.admissionCounts() },
      config_reload_signals: this.configReloadSignals,
    };
  }

  /**
   * Registers `svc_cluster_*` on `registry`. Values are read from the
   * stores' counters at scrape time; every label has a fixed set of values.
   */
  registerMetrics(registry: Registry): void {
    const cluster = this;
    registry.registerMetric(
      new Counter({
        name: 'svc_cluster_events_total',
        help: 'Cross-node auth events heard, by what became of them (applied, duplicate, stale, invalid, own, repaired by reconciliation)',
        labelNames: ['outcome'],
        registers: [],
        collect() {
          const stats = cluster.credentialStore.bus.stats();
          this.reset();
          this.inc({ outcome: 'applied' }, stats.applied);
          this.inc({ outcome: 'duplicate' }, stats.duplicates);
          this.inc({ outcome: 'stale' }, stats.stale);
          this.inc(
            { outcome: 'invalid' },
            stats.invalid + cluster.cooldownStore.invalidNotifications + cluster.quotaStore.invalidNotifications,
          );
          this.inc({ outcome: 'own' }, stats.own);
          this.inc({ outcome: 'repaired' }, stats.repaired);
        },
      }),
    );
    registry.registerMetric(
      new Counter({
        name: 'svc_cluster_reconnects_total',
        help: 'Reconnections of the LISTEN connections, by listener',
        labelNames: ['listener'],
        registers: [],
        collect() {
          const status = cluster.status();
          this.reset();
          this.inc({ listener: 'auth_events' }, status.listeners.auth_events.reconnects);
          this.inc({ listener: 'cooldowns' }, status.listeners.cooldowns.reconnects);
          this.inc({ listener: 'quota' }, status.listeners.quota.reconnects);
          this.inc({ listener: 'sign_ins' }, status.listeners.sign_ins.reconnects);
        },
      }),
    );
    registry.registerMetric(
      new Counter({
        name: 'svc_cluster_quota_admissions_total',
        help: 'Quota admissions before requests on credentials with a limit, by outcome (admitted; refused: no room; failed: a database error; stalled: no answer in time, went ahead without a reservation; skipped: within the backoff after a failure or stall, went ahead without asking)',
        labelNames: ['outcome'],
        registers: [],
        collect() {
          const { admitted, refused, failed, stalled, skipped } = cluster.status().quota_admissions;
          this.reset();
          this.inc({ outcome: 'admitted' }, admitted);
          this.inc({ outcome: 'refused' }, refused);
          this.inc({ outcome: 'failed' }, failed);
          this.inc({ outcome: 'stalled' }, stalled);
          this.inc({ outcome: 'skipped' }, skipped);
        },
      }),
    );
    registry.registerMetric(
      new Counter({
        name: 'svc_cluster_reconciliations_total',
        help: 'Reconciliation passes comparing stored credential revisions with this node’s',
        registers: [],
        collect() {
          this.reset();
          this.inc(cluster.credentialStore.bus.stats().reconciliations);
        },
      }),
    );
    registry.registerMetric(
      new Gauge({
        name: 'svc_cluster_listener_connected',
        help: '1 while the LISTEN connection is up, by listener',
        labelNames: ['listener'],
        registers: [],
        collect() {
          const status = cluster.status();
          this.set({ listener: 'auth_events' }, status.listeners.auth_events.connected ? 1 : 0);
          this.set({ listener: 'cooldowns' }, status.listeners.cooldowns.connected ? 1 : 0);
          this.set({ listener: 'quota' }, status.listeners.quota.connected ? 1 : 0);
          this.set({ listener: 'sign_ins' }, status.listeners.sign_ins.connected ? 1 : 0);
        },
      }),
    );
  }

  /** Closes the stores and the pool. The credential and quota stores are closed by the credential manager's owner first. */
  async close(): Promise<void> {
    await this.signInDirectory.close().catch(() => undefined);
    await this.cooldownStore.close().catch(() => undefined);
    await this.refreshLock.close().catch(() => undefined);
    await this.credentialStore.close().catch(() => undefined);
    await this.quotaStore.close().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}
