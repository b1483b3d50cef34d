/**
 * @module credentialManager
 * The credentials of a gateway, in one object: it owns the store, a pool
 * per provider, the quota tracker, the cooldowns, the refresh worker, the
 * sign-ins in progress and the auth update queue.
 *
 * Runtime changes all take one road: store watchers (a file in `auths/`
 * changed), the config file watcher, and runtime calls (`submit`, used by
 * the websocket gateway) push updates into the queue, and one consumer
 * applies them in order. Management calls (`add`, `update`, ...) write
 * through the store at once and swap the result into the pools; the echo
 * of their own write that comes back through a watcher is recognised by its
 * revision and content, and changes nothing.
 */
import { type Scheduler, systemScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import type { Credential, CredentialPatch, CredentialStatusRecord, NewCredential, QuotaStatus } from '../credential.js';
import { CredentialNotFound, CredentialsError } from '../errors.js';
import type { AuthFlow, AuthFlowContext } from '../oauth/authFlow.js';
import { createHttpClient, type HttpClient } from '../oauth/http.js';
import { SignInSessions } from '../oauth/signInSessions.js';
import { CooldownTracker, type CredentialCooldowns } from '../pool/cooldownTracker.js';
import { CredentialPool, checkStrategy, type PoolStrategy } from '../pool/credentialPool.js';
import { type AdmissionCounts, QuotaTracker } from '../pool/quotaTracker.js';
import { type AppliedUpdate, type AuthUpdate, AuthUpdateQueue, type QueueStats } from '../queue/authUpdateQueue.js';
import { type RefreshStatusRecord, RefreshWorker } from '../refresh/refreshWorker.js';
import type { CredentialStore, StoreChange, Unsubscribe } from '../store/credentialStore.js';
import { MemoryQuotaStore, type QuotaStore } from '../store/quotaStore.js';
import { type CredentialsLogger, silentLogger } from '../util/logger.js';
import type { ResetSchedule } from '../util/time.js';
import { type FileWatch, watchFile } from '../watch/watchFile.js';
import { CredentialWriter, processRefreshLock } from './credentialWriter.js';
import {
  type CredentialManagerOptions,
  definedOnly,
  forward,
  type ManagerEvents,
  messageOf,
  POOL_EVENT_NAMES,
  type ProviderQuotaConfig,
  type RefreshConfig,
  type RuntimeUpdate,
  type RuntimeUpdateResult,
  redactUpdate,
} from './managerTypes.js';
import { UpdateConsumer } from './updateConsumer.js';

/**
 * Owns the credentials of a gateway.
 *
 * @example
 * ```ts
 * const store = await FileCredentialStore.open({ directory: './auths' });
 * const manager = new CredentialManager({ store, strategy: 'priority', flows: [codeAssistantFlow()] });
 * await manager.start();
 * const credential = manager.pool('openai').acquire();
 * ```
 */
export class CredentialManager {
  readonly events = new EventEmitter<ManagerEvents>();
  /** Device sign-ins in progress. */
  readonly signIns: SignInSessions;
  readonly store: CredentialStore;
  private readonly scheduler: Scheduler;
  private readonly quotaStore: QuotaStore;
  private readonly quotas: QuotaTracker;
  private readonly cooldowns: CredentialCooldowns;
  private readonly worker: RefreshWorker;
  private readonly writer: CredentialWriter;
  private readonly queue: AuthUpdateQueue;
  private readonly updates: UpdateConsumer;
  private readonly pools = new Map<string, CredentialPool>();
  private readonly providerOf = new Map<string, string>();
  private readonly flows = new Map<string, AuthFlow>();
  private readonly http: HttpClient;
  private readonly logger: CredentialsLogger;
  private readonly configFile: string | undefined;
  private strategy: PoolStrategy;
  private schedules: Record<string, ResetSchedule>;
  private providers: Record<string, ProviderQuotaConfig>;
  private readonly stops: Unsubscribe[] = [];
  private readonly lifetime = new AbortController();
  private consumer: Promise<void> | undefined;
  private configWatch: FileWatch | undefined;
  private state: 'new' | 'started' | 'closed' = 'new';

  constructor(options: CredentialManagerOptions) {
    this.store = options.store;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.strategy = checkStrategy(options.strategy ?? 'round_robin');
    this.schedules = { ...options.quotaResetSchedule };
    this.providers = { ...options.providers };
    this.logger = options.logger ?? silentLogger;
    this.http = options.http ?? createHttpClient();
    this.configFile = options.configFile;
    for (const flow of options.flows ?? []) this.register(flow);
    this.quotaStore = options.quotaStore ?? new MemoryQuotaStore();
    this.quotas = new QuotaTracker({
      store: this.quotaStore,
      scheduler: this.scheduler,
      scheduleOf: (provider) => this.schedules[provider] ?? this.providers[provider]?.quota?.reset,
      providerLimitOf: (provider) => this.providers[provider]?.quota?.limit,
      ...(options.quotaFlushIntervalMs === undefined ? {} : { flushIntervalMs: options.quotaFlushIntervalMs }),
      ...(options.quotaFlushBatchSize === undefined ? {} : { flushBatchSize: options.quotaFlushBatchSize }),
      ...(options.quotaReservationTtlMs === undefined ? {} : { reservationTtlMs: options.quotaReservationTtlMs }),
      ...(options.quotaAdmissionTimeoutMs === undefined ? {} : { reserveTimeoutMs: options.quotaAdmissionTimeoutMs }),
      ...(options.quotaStopTimeoutMs === undefined ? {} : { stopTimeoutMs: options.quotaStopTimeoutMs }),
    });
    this.quotas.events.on('quota:reserve_failed', ({ error, credentialId }) => this.failed('quota', credentialId, error));
    this.quotas.events.on('quota:flush_failed', ({ error }) => this.failed('quota', null, error));
    this.cooldowns = options.cooldowns ?? new CooldownTracker({ scheduler: this.scheduler });
    this.queue = new AuthUpdateQueue(options.queueCapacity === undefined ? {} : { capacity: options.queueCapacity });
    this.queue.events.on('full', (stats) => this.events.emit('queue:full', stats));
    this.writer = new CredentialWriter({
      store: this.store,
      scheduler: this.scheduler,
      apply: (credential) => this.apply(credential),
      removed: (id) => this.removeFromPools(id),
      held: (id) => this.heldCredential(id),
      flow: (name) => this.flows.get(name),
      flowContext: () => this.flowContext(this.lifetime.signal),
      refreshLock: options.refreshLock ?? processRefreshLock,
      failed: (operation, id, error) => this.failed(operation, id, error),
    });
    this.updates = new UpdateConsumer({
      queue: this.queue,
      writer: this.writer,
      held: (id) => this.heldCredential(id),
      removed: (id) => this.removeFromPools(id),
      forgotten: (id) => this.worker.forget(id),
      configReloaded: (path) => this.events.emit('config:reload', { path }),
      applied: (update, error) => {
        if (error !== undefined) this.failed(update.type, update.type === 'config.reload' ? null : update.id, error);
        this.events.emit('auth:applied', { update: redactUpdate(update), error: error === undefined ? null : messageOf(error) });
      },
    });
    const refresh = options.refresh ?? {};
    this.worker = new RefreshWorker({
      scheduler: this.scheduler,
      ...definedOnly({
        enabled: refresh.enabled,
        checkIntervalMs: refresh.checkIntervalMs,
        leadTimeMs: refresh.leadTimeMs,
        safetyIntervalMs: refresh.safetyIntervalMs,
      }),
      candidates: () => this.oauthCredentials(),
      perform: (id) => this.writer.refresh(id),
    });
    forward(this.worker.events, this.events, ['refresh:success', 'refresh:failure', 'refresh:check']);
    this.worker.events.on('refresh:failure', (e) =>
      this.logger.warn({ credential: e.credentialId, code: e.code, next_attempt: e.nextAttempt }, e.message),
    );
    this.signIns = new SignInSessions({
      scheduler: this.scheduler,
      flow: (name) => this.flows.get(name),
      context: (signal) => this.flowContext(AbortSignal.any([signal, this.lifetime.signal])),
      save: async (flow, signedIn, meta) => {
        const stored = await this.writer.saveSignIn(flow, signedIn, meta, this.allHeld());
        return this.describe(stored.id);
      },
      ...(options.signInDirectory ? { directory: options.signInDirectory } : {}),
      ...(options.nodeId ? { nodeId: options.nodeId } : {}),
      onDirectoryError: (error) => this.failed('sign-in directory', null, error),
    });
    forward(this.signIns.events, this.events, ['signin:start', 'signin:end']);
  }

  /**
   * Loads every credential and quota, subscribes to store changes (and the
   * config file), and starts the refresh worker and the quota resets.
   * When the quota or the credentials cannot be loaded it rejects with
   * nothing left running (no watch), and may be called again.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new CredentialsError('invalid_argument', 'start() may be called once');
    this.state = 'started';
    let listed: Credential[];
    // Watch before listing: a change that lands while the list is read is held back and replayed against what
    // the list loaded (one the list already has is then skipped by its revision; a delete of one it has, applied).
    const early: StoreChange[] = [];
    let onChange = (change: StoreChange): void => {
      early.push(change);
    };
    try {
      const interrupted = await this.signIns.recover();
      if (interrupted > 0) this.logger.warn({ sign_ins: interrupted }, 'sign-ins pending before the restart marked interrupted');
      await this.quotas.load();
      this.stops.push(this.store.watch((change) => onChange(change)));
      listed = await this.store.list();
    } catch (error) {
      // Nothing has been loaded into the pools yet: drop the watch and go back to new, so start() may be retried.
      for (const stop of this.stops.splice(0)) stop();
      this.state = 'new';
      throw error;
    }
    const byProvider = new Map<string, Credential[]>();
    for (const credential of listed) {
      const list = byProvider.get(credential.provider) ?? [];
      list.push(credential);
      byProvider.set(credential.provider, list);
    }
    for (const [provider, credentials] of byProvider) {
      this.pool(provider).upsert(credentials);
      for (const c of credentials) this.providerOf.set(c.id, provider);
    }
    onChange = (change) => this.updates.onStoreChange(change);
    for (const change of early) this.updates.onStoreChange(change);
    if (this.configFile) {
      const path = this.configFile;
      const watch = watchFile(path, () => this.queue.push({ type: 'config.reload', path, source: 'config' }));
      this.configWatch = watch;
      this.stops.push(() => void watch.close());
    }
    this.quotas.start();
    this.worker.start();
    this.consumer = this.updates.run();
    this.logger.info({ credentials: this.providerOf.size, providers: this.pools.size, backend: this.store.backend }, 'credentials loaded');
  }

  /** Resolves once the watchers (of the store and the config file) see changes. */
  async watching(): Promise<void> {
    await this.configWatch?.ready;
    await (this.store as { watching?: () => Promise<void> }).watching?.();
  }

  /**
   * Stops the background work, applies what is queued, and writes pending
   * quota and status changes. The store stays open: its owner closes it.
   */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    for (const stop of this.stops.splice(0)) stop();
    this.worker.stop();
    await this.signIns.close();
    this.queue.close();
    await this.consumer;
    this.lifetime.abort();
    await this.writer.flush();
    await this.quotas.stop();
    await this.quotaStore.close();
    for (const pool of this.pools.values()) pool.close();
  }

  /** The pool of `provider` (an empty one for a provider without credentials). */
  pool(provider: string): CredentialPool {
    let pool = this.pools.get(provider);
    if (!pool) {
      pool = new CredentialPool(provider, {
        strategy: this.strategy,
        scheduler: this.scheduler,
        quotas: this.quotas,
        cooldowns: this.cooldowns,
        refresh: (id) => this.worker.refresh(id),
        persistStatus: (id, status, message) => {
          const held = this.heldCredential(id);
          if (held) this.writer.persistStatus(id, status, message, held.revision);
        },
      });
      forward(pool.events, this.events, POOL_EVENT_NAMES);
      this.pools.set(provider, pool);
    }
    return pool;
  }

  /** Providers that have credentials. */
  providersWithCredentials(): string[] {
    return [...this.pools]
      .filter(([, pool]) => pool.size > 0)
      .map(([name]) => name)
      .sort();
  }

  /** Status records of every credential, or of one provider's, without secrets. */
  list(provider?: string): CredentialStatusRecord[] {
    const pools = provider === undefined ? [...this.pools.values()] : [this.pools.get(provider)].filter((p) => p !== undefined);
    return pools.flatMap((pool) => pool.status()).sort((a, b) => a.provider.localeCompare(b.provider) || (a.id < b.id ? -1 : 1));
  }

  /** One credential's status record. */
  describe(id: string): CredentialStatusRecord {
    const record = this.poolOf(id)?.statusOf(id);
    if (!record) throw new CredentialNotFound(id);
    return record;
  }

  /** Adds a credential (`POST /auths`). */
  async add(input: NewCredential): Promise<CredentialStatusRecord> {
    return this.describe((await this.writer.add(input)).id);
  }

  /** Changes a credential (`PUT /auths/{provider}`). */
  async update(id: string, patch: CredentialPatch): Promise<CredentialStatusRecord> {
    const stored = await this.writer.update(id, patch);
    this.worker.forget(id);
    return this.describe(stored.id);
  }

  /** Deletes a credential (`DELETE /auths/{provider}?id=`). */
  async delete(id: string): Promise<void> {
    await this.writer.remove(id);
    this.worker.forget(id);
  }

  /** Sets a credential's token limit (`PUT /auths/{provider}/quota`); null means unlimited. */
  async setQuota(id: string, quota: { limit: number | null }): Promise<CredentialStatusRecord> {
    return this.update(id, { quota: { limit: quota.limit } });
  }

  /** Starts a fresh quota period for a credential now. */
  async resetQuota(id: string): Promise<CredentialStatusRecord> {
    this.describe(id);
    await this.quotas.reset(id);
    return this.describe(id);
  }

  /** A provider's quota and its credentials' (`GET /auths/{provider}/quota`). */
  quota(provider: string): {
    provider: string;
    limit: number | null;
    used: number;
    remaining: number | null;
    credentials: (QuotaStatus & { id: string })[];
  } {
    const pool = this.pools.get(provider);
    if (!pool) return { provider, limit: this.providers[provider]?.quota?.limit ?? null, used: 0, remaining: null, credentials: [] };
    return { provider, ...pool.quota(), credentials: pool.status().map((r) => ({ id: r.id, ...r.quota })) };
  }

  /** Requests let through without a quota reservation on this node's own decision (see `QuotaTracker.admissionCounts`). */
  quotaAdmissions(): AdmissionCounts {
    return this.quotas.admissionCounts();
  }

  /**
   * Refreshes a credential now (`POST /auths/{provider}/refresh`), ignoring
   * any backoff; joins a refresh already in flight.
   */
  async refresh(id: string): Promise<CredentialStatusRecord> {
    this.describe(id);
    await this.worker.refresh(id, { force: true });
    return this.describe(id);
  }

  /** The refresh worker's status record (`GET /auths/refresh/status`). */
  refreshStatus(): RefreshStatusRecord {
    return this.worker.status();
  }

  /** Runs a refresh pass now (the same pass the timers run). */
  checkRefresh(): Promise<{ checked: number; refreshed: number; failed: number }> {
    return this.worker.check('manual');
  }

  /**
   * Queues a runtime change (the websocket gateway's `auth.upsert` and
   * `auth.delete`); resolves once it is applied, with the credential's id
   * and revision, and rejects with why not.
   *
   * @example
   * ```ts
   * const { id, revision } = await manager.submit({ type: 'auth.upsert', credential: { provider: 'openai', type: 'api_key', token } });
   * ```
   */
  submit(update: RuntimeUpdate): Promise<RuntimeUpdateResult> {
    return this.updates.submit(update);
  }

  /** Queues an update from elsewhere (the cluster event bus); resolves once applied, with the revision it came to. */
  enqueue(update: AuthUpdate): Promise<AppliedUpdate> {
    return this.updates.enqueue(update);
  }

  /** The auth update queue's counters. */
  queueStats(): QueueStats {
    return this.queue.stats();
  }

  /** Applies new `auth.*` settings (a config reload). */
  configure(options: {
    strategy?: PoolStrategy;
    quotaResetSchedule?: Record<string, ResetSchedule>;
    providers?: Record<string, ProviderQuotaConfig>;
    refresh?: RefreshConfig;
  }): void {
    if (options.strategy !== undefined) {
      this.strategy = checkStrategy(options.strategy);
      for (const pool of this.pools.values()) pool.setStrategy(this.strategy);
    }
    if (options.quotaResetSchedule !== undefined) this.schedules = { ...options.quotaResetSchedule };
    if (options.providers !== undefined) this.providers = { ...options.providers };
    if (options.quotaResetSchedule !== undefined || options.providers !== undefined) this.quotas.reschedule();
    if (options.refresh) this.worker.reconfigure(definedOnly({ ...options.refresh }));
  }

  /** Registers a sign-in and refresh flow (the presets, or a custom one). */
  register(flow: AuthFlow): void {
    if (!flow || typeof flow.name !== 'string' || !/^[a-z0-9][a-z0-9._-]{0,63}$/.test(flow.name)) {
      throw new CredentialsError('invalid_argument', 'a flow needs a name of lower-case letters, digits, ".", "_" or "-"', {
        field: 'name',
      });
    }
    if (this.flows.has(flow.name))
      throw new CredentialsError('invalid_argument', `a flow named ${JSON.stringify(flow.name)} is already registered`);
    this.flows.set(flow.name, flow);
  }

  /** Names of the registered flows. */
  flowNames(): string[] {
    return [...this.flows.keys()].sort();
  }

  // ---- internals -------------------------------------------------------

  private apply(credential: Credential): void {
    const previous = this.providerOf.get(credential.id);
    if (previous !== undefined && previous !== credential.provider) this.pools.get(previous)?.remove(credential.id);
    this.pool(credential.provider).upsert([credential]);
    this.providerOf.set(credential.id, credential.provider);
  }

  private removeFromPools(id: string): void {
    const provider = this.providerOf.get(id);
    if (provider === undefined) return;
    this.pools.get(provider)?.remove(id);
    this.providerOf.delete(id);
  }

  private poolOf(id: string): CredentialPool | undefined {
    const provider = this.providerOf.get(id);
    return provider === undefined ? undefined : this.pools.get(provider);
  }

  private heldCredential(id: string): Credential | undefined {
    return this.poolOf(id)?.credential(id);
  }

  private allHeld(): Credential[] {
    return [...this.pools.values()].flatMap((pool) => pool.ids().map((id) => pool.credential(id)!));
  }

  private *oauthCredentials(): Iterable<Credential> {
    for (const pool of this.pools.values()) {
      for (const record of pool.status()) {
        const credential = pool.credential(record.id);
        if (credential?.type === 'oauth') yield { ...credential, status: record.status };
      }
    }
  }

  private flowContext(signal: AbortSignal): AuthFlowContext {
    return { http: this.http, scheduler: this.scheduler, signal };
  }

  private failed(operation: string, credentialId: string | null, error: unknown): void {
    const message = messageOf(error);
    this.logger.error({ operation, credential: credentialId }, message);
    this.events.emit('store:error', { operation, credentialId, message });
  }
}
