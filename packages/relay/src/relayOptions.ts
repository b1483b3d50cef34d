/**
 * @module relayOptions
 * What a {@link Relay} is given: its options, and the ports it reads and
 * reports to (credential pools, provider cooldowns, provider health), which
 * other packages implement (`@switchyard/credentials`, `CooldownManager`,
 * `HealthMonitor`).
 *
 * Also the {@link RelayContext} the relay's parts share. `Relay.configure`
 * replaces the options as a whole while requests are in flight, so every
 * part reads them through the one context instead of keeping a copy.
 */

import type { CooldownEvents, HealthEvents, RelayEvents, StrategyName } from '@switchyard/core-routing';
import type { Clock, Scheduler } from '@switchyard/runtime';
import type { EventEmitter } from 'eventemitter3';
import type { NodeFailover } from './failover.js';
import type { AdapterRegistry, Transport } from './providers/adapter.js';
import type { CredentialQuotaView, QuotaExceededSettings } from './quotaPolicy.js';
import type { ResponseCache } from './responseCache.js';
import type { RoutingTable } from './routingTable.js';
import type { ProviderConfig, RelayCredential } from './types.js';

/** A provider's credentials, as the relay uses them (implemented by `@switchyard/credentials`). */
export interface RelayCredentialPool {
  acquire(options?: { exclude?: ReadonlySet<string> }): RelayCredential;
  /** `reservation`: what {@link admit} handed this attempt, settled by its usage. */
  reportSuccess(credentialId: string, usage?: { inputTokens: number; outputTokens: number }, reservation?: string): void;
  /**
   * The tokens of an attempt that was no success (a stream broken after its first byte), settling its
   * `reservation` as {@link reportSuccess} would, but without clearing the credential's failure streak:
   * the failure is reported next, and must count towards a cooldown as it would on its own.
   */
  reportUsage(credentialId: string, usage?: { inputTokens: number; outputTokens: number }, reservation?: string): void;
  /**
   * Admission against a quota shared by several nodes, after `acquire` and
   * before the attempt goes upstream: undefined when nothing needs holding
   * (so the relay awaits only in cluster mode). A refused credential is
   * left for this request, as if out of quota.
   */
  admit?(credentialId: string, estimatedTokens?: number): Promise<RelayAdmission> | undefined;
  /** Lets go of an admitted attempt's reservation (idempotent: a no-op once `reportSuccess` or `reportUsage` settled it). */
  release?(credentialId: string, reservation: string): void;
  reportFailure(
    credentialId: string,
    failure: { kind: 'rate_limit' | 'unauthorized' | 'quota_exceeded' | 'error'; retryAfterMs?: number; message?: string },
  ): void;
  refresh(credentialId: string): Promise<RelayCredential>;
  /** One credential's state; lets `quota-exceeded.switch-project: false` see that the credential in use ran out. */
  statusOf?(credentialId: string): CredentialQuotaView | undefined;
  /** Every credential's state; tells a pool out of quota from one out of credentials. */
  status?(): readonly CredentialQuotaView[];
  /** A usable credential without counting a request (so checking whether any is left does not move the rotation). */
  peek?(): RelayCredential | undefined;
  /** A credential as `acquire` hands it out, whatever its state (for the preview-model retry on a credential the upstream refused). */
  peekById?(credentialId: string): RelayCredential | undefined;
}

/** A pool's answer to {@link RelayCredentialPool.admit}. */
export type RelayAdmission = { admitted: true; reservation?: string } | { admitted: false; used: number; reserved: number; limit: number };

/**
 * Per-provider cooldown bookkeeping (implemented by `CooldownManager`). With
 * `events`, the relay holds cooling providers out of selection as cooldowns
 * start and end, on this node or (through a shared store) another.
 */
export interface RelayCooldowns {
  /** Returns the period the failure started, if it started one (`CooldownManager` does). */
  recordFailure(key: string, failure: { kind: 'rate_limit' | 'error'; retryAfterMs?: number; status?: number; endsBy?: number }): unknown;
  recordSuccess(key: string): void;
  period?(key: string): { endsAt: number } | undefined;
  events?: EventEmitter<CooldownEvents>;
}

/** Per-provider request statistics (implemented by `HealthMonitor`); with `events`, unhealthy providers are held out. */
export interface RelayHealth {
  recordRequest(provider: string, sample: { ok: boolean; latencyMs: number }): void;
  isHealthy?(provider: string): boolean;
  /** The providers it watches; others are never held out as unhealthy. */
  readonly providers?: readonly string[];
  events?: EventEmitter<HealthEvents>;
}

/** Options of {@link Relay}. */
export interface RelayOptions {
  providers: ProviderConfig[];
  strategy?: StrategyName;
  /** Provider kinds; default {@link defaultAdapters}. */
  adapters?: AdapterRegistry;
  /** HTTP transport; default an {@link UndiciTransport} with default pool settings. */
  transport?: Transport;
  credentials?: { pool(provider: string): RelayCredentialPool | undefined };
  cooldowns?: RelayCooldowns;
  health?: RelayHealth;
  cache?: ResponseCache;
  /** Node failover (`server.failover`). */
  failover?: NodeFailover;
  /** Attempts per request, the first included (default 3). */
  maxAttempts?: number;
  clock?: Clock;
  /** Timers for stream keep-alives; default real timers (tests pass a `FakeScheduler`). */
  scheduler?: Scheduler;
  /**
   * Keep-alive interval of a started stream, in milliseconds (default 15 s;
   * 0 turns them off). A keep-alive is an SSE comment, or Anthropic's `ping`
   * event for Anthropic clients, sent only after a silence this long, so
   * proxies with idle timeouts do not cut long reasoning pauses.
   */
  keepAliveMs?: number;
  latencyWindowMs?: number;
  /** `quota-exceeded.*` (both default true). */
  quotaExceeded?: QuotaExceededSettings;
  /**
   * Headers to add to one upstream attempt, asked for as it is about to go out: W3C trace context,
   * so the provider's spans hang under the attempt's (the gateway passes its tracer's
   * `upstreamHeaders`). Not called for answers made locally.
   */
  upstreamHeaders?: (requestId: string, provider: string, attempt: number) => Record<string, string>;
}

/**
 * What the relay's parts share: one per {@link Relay}, built by its
 * constructor. Everything but `options` is fixed for the relay's life.
 */
export interface RelayContext {
  /** The relay's current options; `Relay.configure` replaces them, so read them here each time rather than keep a copy. */
  options: RelayOptions;
  readonly table: RoutingTable;
  readonly adapters: AdapterRegistry;
  readonly transport: Transport;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly events: EventEmitter<RelayEvents>;
}
