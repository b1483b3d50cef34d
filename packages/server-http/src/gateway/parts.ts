/**
 * @module parts
 * The parts of a running gateway that the control plane and its routes use,
 * declared apart from the `Gateway` class: each route takes only the parts it
 * reads (`Pick<GatewayParts, …>`), tests can hand it just those, and no route
 * imports the class whose module builds the control plane (the type cycle
 * gateway.ts -> controlPlane.ts -> routes -> gateway.ts is gone).
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { CooldownManager, HealthMonitor, SelfHealer } from '@switchyard/core-routing';
import type { AccessPolicy, UnsafeBindError } from '@switchyard/http-kit';
import type { Observability } from '@switchyard/observability';
import type { Relay } from '@switchyard/relay';
import type { Scheduler } from '@switchyard/runtime';
import type { ManagementGuard, SessionStore } from '../controlPlane/managementAuth.js';
import type { GatewayCluster } from './cluster.js';
import type { GatewayConfig } from './config/schema.js';
import type { GatewayCredentials } from './credentials.js';
import type { GuardedHosts } from './guardedHosts.js';
import type { LogTail } from './logTail.js';
import type { ProviderStatsCollector } from './providerStats.js';
import type { GatewayUsage } from './usage/gatewayUsage.js';

/** The variables the control plane's middleware sets on each request. */
export type ControlPlaneEnv = { Variables: { requestId: string } };

/** The control-plane app type every route module registers on. */
export type ControlPlaneApp = OpenAPIHono<ControlPlaneEnv>;

/** The management guard and the dashboard's sessions, shared by the control plane and the websocket routes. */
export interface GatewayManagement {
  guard: ManagementGuard;
  sessions: SessionStore;
}

/** Everything of a running gateway that a control-plane route may read or call. */
export interface GatewayParts {
  /** The config in force. */
  config(): GatewayConfig;
  readonly configPath: string | undefined;
  readonly scheduler: Scheduler;
  readonly startedAt: number;
  readonly observability: Observability;
  readonly credentials: GatewayCredentials;
  readonly cluster: GatewayCluster | undefined;
  /** Usage accounting (`usage.enabled`), else undefined. */
  readonly usage: GatewayUsage | undefined;
  readonly relay: Relay;
  readonly cooldowns: CooldownManager;
  readonly health: HealthMonitor;
  readonly healer: SelfHealer;
  readonly guardedHosts: GuardedHosts;
  readonly logTail: LogTail;
  readonly management: GatewayManagement;
  readonly access: AccessPolicy;
  bindRefusal(config: GatewayConfig): UnsafeBindError | undefined;
  runningConfig(candidate?: GatewayConfig): { config: GatewayConfig; restartNeeded: string[] };
  providerStats(): ReturnType<ProviderStatsCollector['report']>;
  reload(
    config: GatewayConfig,
    options?: { fromFile?: string; announce?: boolean; requestId?: string; viaApi?: boolean },
  ): { restartNeeded: string[] };
}
