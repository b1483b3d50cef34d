/**
 * @module credentialPool
 * The credentials of one provider, and the choice among them on each
 * request. `acquire()` is on the request path: it is synchronous and
 * allocation-free (a pick in core-routing's `Selector`, an expiry check, a
 * pre-built frozen result). Everything else (status changes, quota,
 * cooldowns) updates the selector's availability when it happens, so the
 * pick never scans.
 *
 * A credential's effective status is its stored status when that is
 * `disabled`, `error` or `expired`; otherwise `expired` once its token is
 * past `expires_at`, `exhausted` while its quota is used up, else `active`.
 * Cooldowns (after 429s) take a credential out of the running without
 * changing its status. The slots and the upkeep of their state live in
 * `slotTable.ts`.
 */

import { Selector } from '@switchyard/core-routing';
import { type Scheduler, systemScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import type { Credential, CredentialStatus, CredentialStatusRecord } from '../credential.js';
import { CredentialsError } from '../errors.js';
import { MemoryQuotaStore } from '../store/quotaStore.js';
import { CooldownTracker, type CredentialCooldowns } from './cooldownTracker.js';
import type { AcquiredCredential, CredentialFailure, CredentialUsage, PoolEvents } from './poolEvents.js';
import { explainNoCredentials, finiteCount, type Slot, sameRecord, statusRecord } from './poolSlot.js';
import { type QuotaAdmission, QuotaTracker } from './quotaTracker.js';
import { SlotTable } from './slotTable.js';

/** Credential selection strategies (`auth.selection_strategy`). */
export const POOL_STRATEGIES = ['round_robin', 'quota_aware', 'priority'] as const;
/** A credential selection strategy. */
export type PoolStrategy = (typeof POOL_STRATEGIES)[number];

/** Collaborators of a pool; the manager shares one quota tracker and one cooldown tracker among its pools. */
export interface CredentialPoolOptions {
  strategy?: PoolStrategy;
  scheduler?: Scheduler;
  quotas?: QuotaTracker;
  cooldowns?: CredentialCooldowns;
  /** Refreshes a credential (single-flight); without it, `refresh()` refuses. */
  refresh?: (credentialId: string) => Promise<void>;
  /** Persists a status the pool decided (expired, exhausted, error), off the request path. */
  persistStatus?: (credentialId: string, status: CredentialStatus, message: string | null) => void;
  /** Cooldown after an upstream `quota_exceeded` when the provider has no reset schedule (default 1 hour). */
  quotaExceededCooldownMs?: number;
}

/**
 * The credentials of one provider.
 *
 * @example
 * ```ts
 * const pool = manager.pool('openai');
 * const credential = pool.acquire();
 * const response = await fetch(url, { headers: { authorization: `Bearer ${credential.token}` } });
 * if (response.status === 429) pool.reportFailure(credential.id, { kind: 'rate_limit', retryAfterMs: 30_000 });
 * else pool.reportSuccess(credential.id, { inputTokens: 812, outputTokens: 95 });
 * ```
 */
export class CredentialPool {
  readonly provider: string;
  readonly events = new EventEmitter<PoolEvents>();
  private readonly scheduler: Scheduler;
  private readonly quotas: QuotaTracker;
  private readonly cooldowns: CredentialCooldowns;
  private readonly refresher: ((credentialId: string) => Promise<void>) | undefined;
  private readonly persistStatus: NonNullable<CredentialPoolOptions['persistStatus']>;
  private readonly quotaExceededCooldownMs: number;
  private readonly selector: Selector;
  private readonly table: SlotTable;
  /** The table's map itself, so that the request path reads it without a hop. */
  private readonly slots: Map<string, Slot>;

  constructor(provider: string, options: CredentialPoolOptions = {}) {
    this.provider = provider;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.quotas = options.quotas ?? new QuotaTracker({ store: new MemoryQuotaStore(), scheduler: this.scheduler });
    this.cooldowns = options.cooldowns ?? new CooldownTracker({ scheduler: this.scheduler });
    this.refresher = options.refresh;
    this.persistStatus = options.persistStatus ?? (() => undefined);
    this.quotaExceededCooldownMs = options.quotaExceededCooldownMs ?? 60 * 60_000;
    this.selector = new Selector([], { strategy: options.strategy ?? 'round_robin', clock: this.scheduler });
    this.table = new SlotTable({
      provider,
      selector: this.selector,
      scheduler: this.scheduler,
      quotas: this.quotas,
      cooldowns: this.cooldowns,
      events: this.events,
      persistStatus: this.persistStatus,
    });
    this.slots = this.table.slots;
  }

  /** The selection strategy in use. */
  get strategy(): PoolStrategy {
    return this.selector.strategy as PoolStrategy;
  }

  /** Number of credentials in the pool. */
  get size(): number {
    return this.slots.size;
  }

  /** Switches the strategy (a config reload). */
  setStrategy(strategy: PoolStrategy): void {
    this.selector.setStrategy(checkStrategy(strategy));
  }

  /**
   * Picks a credential for one request: synchronous and allocation-free.
   * `exclude` holds ids this request already tried.
   *
   * @throws {NoCredentials} when none is usable; `retryAt` says when one returns, if known.
   */
  acquire(options?: { exclude?: ReadonlySet<string> }): AcquiredCredential {
    for (;;) {
      let id: string;
      try {
        id = this.selector.select(options);
      } catch (error) {
        throw explainNoCredentials(this.provider, this.slots.values(), this.quotas, this.cooldowns, error, options?.exclude);
      }
      const slot = this.slots.get(id)!;
      const now = this.scheduler.now();
      if (slot.expiresAtMs <= now) {
        // Found lazily, on the pick: expiry needs no timer per credential.
        this.table.recompute(slot, true);
        continue;
      }
      slot.requests++;
      slot.lastUsedAt = now;
      if (this.table.rotationsPending) this.table.announceRotations(id);
      return slot.acquired;
    }
  }

  /**
   * A usable credential, without counting a request or moving the
   * rotation: for health probes and other callers that only need a token
   * to look with. Prefers the lowest `priority`, then the smallest id, so
   * repeated probes use the same credential. `undefined` when none is usable.
   */
  peek(): AcquiredCredential | undefined {
    const now = this.scheduler.now();
    let best: Slot | undefined;
    for (const slot of this.slots.values()) {
      if (slot.expiresAtMs <= now) this.table.recompute(slot, true);
      if (slot.status !== 'active' || this.cooldowns.coolingUntil(slot.stored.id) !== undefined) continue;
      if (!best || preferredForProbe(slot, best)) best = slot;
    }
    return best?.acquired;
  }

  /**
   * A credential as {@link acquire} hands it out, whatever its state, without
   * counting a request. The relay uses it to retry, with a preview model, a
   * credential the upstream refused for one model's quota.
   */
  peekById(credentialId: string): AcquiredCredential | undefined {
    return this.slots.get(credentialId)?.acquired;
  }

  /**
   * Counts a successful request: clears failure streaks and deducts its
   * tokens from the quota, settling the request's `reservation` (from
   * {@link admit}) when it holds one.
   */
  reportSuccess(credentialId: string, usage?: CredentialUsage, reservation?: string): void {
    if (!this.slots.has(credentialId)) return;
    this.cooldowns.recordSuccess(credentialId);
    this.reportUsage(credentialId, usage, reservation);
  }

  /**
   * Deducts a request's tokens and settles its `reservation` as
   * {@link reportSuccess} does, but leaves failure streaks and backoffs
   * alone: for a stream that broke after its first byte, whose tokens are
   * spent though it was no success (its failure is reported next).
   */
  reportUsage(credentialId: string, usage?: CredentialUsage, reservation?: string): void {
    if (!this.slots.has(credentialId)) return;
    const tokens = usage ? (finiteCount(usage.inputTokens) ?? 0) + (finiteCount(usage.outputTokens) ?? 0) : 0;
    if (tokens > 0 || reservation !== undefined) this.quotas.record(credentialId, tokens, reservation);
  }

  /**
   * Cluster mode: holds room in the credential's shared quota for one
   * request, after `acquire` and before the request goes upstream (see
   * `QuotaTracker.admit`). Undefined when nothing needs holding. Settle
   * what it admits with `reportSuccess`, `reportUsage` or `release`.
   */
  admit(credentialId: string, estimatedTokens?: number): Promise<QuotaAdmission> | undefined {
    return this.slots.has(credentialId) ? this.quotas.admit(credentialId, estimatedTokens) : undefined;
  }

  /**
   * Lets go of an admitted request's reservation when it used no tokens
   * (idempotent; a no-op after `reportSuccess` or `reportUsage` settled it).
   */
  release(credentialId: string, reservation: string): void {
    this.quotas.release(credentialId, reservation);
  }

  /**
   * Counts a failed request. `rate_limit` cools the credential down (for
   * `retryAfterMs`, else with backoff); `quota_exceeded` makes it
   * `exhausted` until its quota resets; `unauthorized` marks an OAuth token
   * `expired` (and starts a refresh) or an API key `error`; `error` cools it
   * down after several in a row.
   */
  reportFailure(credentialId: string, failure: CredentialFailure): void {
    const slot = this.slots.get(credentialId);
    if (!slot) return;
    const message = failure.message === undefined ? null : String(failure.message).slice(0, 500);
    const retryAfterMs = finiteCount(failure.retryAfterMs);
    switch (failure.kind) {
      case 'rate_limit':
        this.cooldowns.recordFailure(credentialId, { kind: 'rate_limit', ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
        break;
      case 'error':
        if (message !== null) slot.lastError = message;
        this.cooldowns.recordFailure(credentialId, { kind: 'error' });
        break;
      case 'quota_exceeded': {
        if (this.quotas.snapshot(credentialId).resets_at !== null) {
          this.quotas.markExhausted(credentialId);
        } else {
          this.cooldowns.cooldown(credentialId, retryAfterMs ?? this.quotaExceededCooldownMs, 'quota_exceeded');
        }
        break;
      }
      case 'unauthorized': {
        const oauth = slot.stored.type === 'oauth';
        const text = oauth
          ? `the upstream rejected the token${message ? ` (${message})` : ''}; refreshing`
          : `the upstream rejected the API key${message ? ` (${message})` : ''}; update the key or set status to active`;
        this.table.setStoredStatus(slot, oauth ? 'expired' : 'error', text);
        this.persistStatus(credentialId, oauth ? 'expired' : 'error', text);
        if (oauth && this.refresher) void this.refresher(credentialId).catch(() => undefined);
        break;
      }
      default:
        throw new CredentialsError('invalid_argument', 'failure.kind must be rate_limit, unauthorized, quota_exceeded or error', {
          field: 'kind',
        });
    }
  }

  /**
   * Refreshes an OAuth credential (after a 401), single-flight: concurrent
   * calls share one refresh. Resolves with the new token.
   */
  async refresh(credentialId: string): Promise<AcquiredCredential> {
    if (!this.slots.has(credentialId))
      throw new CredentialsError('credential_not_found', `no credential has id ${JSON.stringify(credentialId)}`);
    if (!this.refresher) throw new CredentialsError('not_refreshable', `credential ${JSON.stringify(credentialId)} has no refresh flow`);
    await this.refresher(credentialId);
    const slot = this.slots.get(credentialId);
    if (!slot)
      throw new CredentialsError('credential_not_found', `credential ${JSON.stringify(credentialId)} was deleted during its refresh`);
    return slot.acquired;
  }

  /** Every credential of the pool as a status record, without secrets, ordered by id. */
  status(): CredentialStatusRecord[] {
    const now = this.scheduler.now();
    const records: CredentialStatusRecord[] = [];
    for (const slot of [...this.slots.values()].sort((a, b) => (a.stored.id < b.stored.id ? -1 : 1))) {
      if (slot.expiresAtMs <= now || slot.status === 'exhausted') this.table.recompute(slot, true);
      records.push(statusRecord(slot, this.quotas, this.cooldowns));
    }
    return records;
  }

  /** One credential's status record, or undefined. */
  statusOf(credentialId: string): CredentialStatusRecord | undefined {
    const slot = this.slots.get(credentialId);
    if (!slot) return undefined;
    if (slot.expiresAtMs <= this.scheduler.now()) this.table.recompute(slot, true);
    return statusRecord(slot, this.quotas, this.cooldowns);
  }

  /** The provider's quota: see {@link QuotaTracker.providerQuota}. */
  quota(): { limit: number | null; used: number; remaining: number | null } {
    return this.quotas.providerQuota(this.provider);
  }

  /** Ids in the pool. */
  ids(): string[] {
    return [...this.slots.keys()];
  }

  /** The stored record of a credential, secrets included (for the manager and the refresh worker). */
  credential(credentialId: string): Credential | undefined {
    return this.slots.get(credentialId)?.stored;
  }

  /**
   * Adds or replaces credentials (from the store). A record whose revision
   * is older than the one held is ignored, so a late or repeated change
   * notification cannot roll a credential back. Returns the ids applied.
   */
  upsert(credentials: readonly Credential[]): string[] {
    const applied: { slot: Slot; isNew: boolean }[] = [];
    let membershipChanged = false;
    for (const credential of credentials) {
      if (credential.provider !== this.provider) {
        throw new CredentialsError(
          'invalid_argument',
          `credential ${credential.id} belongs to ${credential.provider}, not ${this.provider}`,
        );
      }
      const previous = this.slots.get(credential.id);
      if (previous && credential.revision < previous.source.revision) continue;
      // The same record again (a watcher's echo of a write already applied): nothing to do.
      if (previous && credential.revision === previous.source.revision && sameRecord(previous.source, credential)) continue;
      if (!previous || previous.stored.priority !== credential.priority) membershipChanged = true;
      const slot: Slot = {
        source: credential,
        stored: credential,
        acquired: Object.freeze({
          id: credential.id,
          provider: credential.provider,
          token: credential.token,
          type: credential.type,
          // Non-secret flow parameters (the code assistant's API base URL) travel with the token.
          metadata: Object.freeze({ ...(credential.oauth?.params ?? {}) }),
        }),
        expiresAtMs: credential.expires_at ? Date.parse(credential.expires_at) : Number.POSITIVE_INFINITY,
        status: previous?.status ?? credential.status,
        message: previous?.message ?? null,
        lastError: previous?.lastError ?? null,
        requests: previous?.requests ?? 0,
        lastUsedAt: previous?.lastUsedAt ?? 0,
      };
      this.slots.set(credential.id, slot);
      this.quotas.track(credential.id, credential.provider, credential.quota.limit, {
        used: credential.quota.used,
        period_start: credential.quota.period_start,
      });
      applied.push({ slot, isNew: previous === undefined });
    }
    if (membershipChanged) this.table.rebuildCandidates();
    for (const { slot, isNew } of applied) {
      this.table.recompute(slot, true, isNew);
      this.events.emit('credential:upsert', { provider: this.provider, credentialId: slot.stored.id, revision: slot.stored.revision });
    }
    return applied.map(({ slot }) => slot.stored.id);
  }

  /** Removes a credential; false when it was not here. */
  remove(credentialId: string): boolean {
    if (!this.slots.delete(credentialId)) return false;
    this.cooldowns.forget(credentialId);
    this.quotas.untrack(credentialId);
    this.table.rebuildCandidates();
    this.events.emit('credential:delete', { provider: this.provider, credentialId });
    return true;
  }

  /** Stops listening to the shared trackers. */
  close(): void {
    this.table.close();
  }
}

/** Checks a strategy name from the config (`auth.selection_strategy`). */
export function checkStrategy(strategy: string): PoolStrategy {
  if (!(POOL_STRATEGIES as readonly string[]).includes(strategy)) {
    throw new CredentialsError('invalid_config', `auth.selection_strategy must be one of ${POOL_STRATEGIES.join(', ')}`, {
      field: 'auth.selection_strategy',
    });
  }
  return strategy as PoolStrategy;
}

/** Whether `a` comes before `b` for {@link CredentialPool.peek}: lower priority, then smaller id. */
function preferredForProbe(a: Slot, b: Slot): boolean {
  return a.stored.priority !== b.stored.priority ? a.stored.priority < b.stored.priority : a.stored.id < b.stored.id;
}
