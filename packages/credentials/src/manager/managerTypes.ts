/**
 * @module managerTypes
 * The options and events of the credential manager, and the small helpers
 * its parts share for events and error messages.
 */
import type { Scheduler } from '@switchyard/runtime';
import type { EventEmitter } from 'eventemitter3';
import type { NewCredential } from '../credential.js';
import { CredentialsError } from '../errors.js';
import type { AuthFlow } from '../oauth/authFlow.js';
import type { HttpClient } from '../oauth/http.js';
import type { SignInDirectory } from '../oauth/signInDirectory.js';
import type { SignInEvents } from '../oauth/signInSessions.js';
import type { CredentialCooldowns } from '../pool/cooldownTracker.js';
import type { PoolStrategy } from '../pool/credentialPool.js';
import type { PoolEvents } from '../pool/poolEvents.js';
import type { AuthUpdate, QueueStats } from '../queue/authUpdateQueue.js';
import type { RefreshEvents } from '../refresh/refreshWorker.js';
import type { CredentialStore } from '../store/credentialStore.js';
import type { QuotaStore } from '../store/quotaStore.js';
import type { CredentialsLogger } from '../util/logger.js';
import type { ResetSchedule } from '../util/time.js';
import type { RefreshLock } from './credentialWriter.js';

/** Provider settings the credentials package reads (`providers.<p>.quota`). */
export interface ProviderQuotaConfig {
  quota?: { limit?: number; reset?: ResetSchedule };
}

/** Refresh settings (`auth.refresh.*`). */
export interface RefreshConfig {
  enabled?: boolean;
  checkIntervalMs?: number;
  leadTimeMs?: number;
  /** The safety pass (default 15 minutes; 0 turns it off). */
  safetyIntervalMs?: number;
}

/** Options of `CredentialManager`. */
export interface CredentialManagerOptions {
  store: CredentialStore;
  /** Where quota usage is kept (default: in memory; pass a `FileQuotaStore` to keep it across restarts). */
  quotaStore?: QuotaStore;
  scheduler?: Scheduler;
  /** `auth.selection_strategy` (default `round_robin`). */
  strategy?: PoolStrategy;
  /** `auth.quota.reset_schedule.<provider>`. */
  quotaResetSchedule?: Record<string, ResetSchedule>;
  /** `providers.<p>`: the provider-level quota limit, and the reset used when `quotaResetSchedule` names none. */
  providers?: Record<string, ProviderQuotaConfig>;
  refresh?: RefreshConfig;
  /** Sign-in and refresh flows (the presets, and custom ones). */
  flows?: readonly AuthFlow[];
  /** Outbound HTTP for the flows (default: undici). */
  http?: HttpClient;
  /** Serializes refreshes across processes (default: this process only). */
  refreshLock?: RefreshLock;
  /** Cooldown tracker shared by the pools (default: a `CooldownTracker` on the scheduler). */
  cooldowns?: CredentialCooldowns;
  /** Auth update queue depth (default 256). */
  queueCapacity?: number;
  /** How often quota usage is written (default 1 s). */
  quotaFlushIntervalMs?: number;
  /** Write quota usage at once when this many requests' usage is waiting (default: the interval alone decides). */
  quotaFlushBatchSize?: number;
  /** How long an unsettled quota reservation lives in a shared quota store (default 10 minutes). */
  quotaReservationTtlMs?: number;
  /** How long an admission waits for a shared quota store (default 5 s). */
  quotaAdmissionTimeoutMs?: number;
  /** How long `close()` waits for requests holding a quota reservation to settle before the last write (default 10 s). */
  quotaStopTimeoutMs?: number;
  /** A config file to watch: a change is queued as a `config.reload` update (see the `config:reload` event). */
  configFile?: string;
  logger?: CredentialsLogger;
  /** Where sign-ins are visible to every node (default: a memory directory, this process only). */
  signInDirectory?: SignInDirectory;
  /** `cluster.node_id`: the owner of this manager's sign-ins in the directory (default `local`). */
  nodeId?: string;
}

/** Events of `CredentialManager`: every pool's events, and the manager's own. */
export interface ManagerEvents extends PoolEvents, RefreshEvents, SignInEvents {
  /** An update from the queue was applied (or failed: `error` is set). */
  'auth:applied': [{ update: AuthUpdate; error: string | null }];
  /** The config file changed: re-read it and call `configure`. */
  'config:reload': [{ path: string }];
  /** A background write failed. */
  'store:error': [{ operation: string; credentialId: string | null; message: string }];
  'queue:full': [QueueStats];
}

/** Every event name of a credential pool. */
export const POOL_EVENT_NAMES = [
  'credential:rotated',
  'credential:status',
  'quota:update',
  'cooldown:start',
  'cooldown:end',
  'credential:upsert',
  'credential:delete',
] as const satisfies readonly (keyof PoolEvents)[];

/** Every event name of `CredentialManager`, for forwarding them all (to metrics, a dashboard). */
export const MANAGER_EVENT_NAMES = [
  ...POOL_EVENT_NAMES,
  'refresh:success',
  'refresh:failure',
  'refresh:check',
  'signin:start',
  'signin:end',
  'auth:applied',
  'config:reload',
  'store:error',
  'queue:full',
] as const satisfies readonly (keyof ManagerEvents)[];

/** A runtime change, as the websocket gateway sends it. */
export type RuntimeUpdate = { type: 'auth.upsert'; credential: NewCredential } | { type: 'auth.delete'; id: string };

/**
 * What a runtime change came to once applied: the credential's id (generated
 * for an upsert without one) and its revision afterwards; for a delete, the
 * revision it had when it was removed, or null when it was already gone.
 */
export interface RuntimeUpdateResult {
  id: string;
  revision: number | null;
}

type AnyEmitter = EventEmitter<Record<string, unknown[]>>;

/** Re-emits `names` of `from` on `to` (the manager's events are the union of its parts'). */
export function forward<E extends object>(
  from: EventEmitter<E>,
  to: EventEmitter<ManagerEvents>,
  names: readonly (keyof E & string)[],
): void {
  for (const name of names) (from as unknown as AnyEmitter).on(name, (...args) => (to as unknown as AnyEmitter).emit(name, ...args));
}

/** The message of an error, which in this package never holds a secret; anything else gets a generic text. */
export function messageOf(error: unknown): string {
  return error instanceof CredentialsError ? error.message : `unexpected ${(error as Error)?.name ?? 'error'}`;
}

/** An update without its credential payload (which holds a token), for events. */
export function redactUpdate(update: AuthUpdate): AuthUpdate {
  if (update.type !== 'auth.upsert' || !update.credential) return update;
  const { credential: _credential, ...rest } = update;
  return rest;
}

export function definedOnly<T extends Record<string, unknown>>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
