/**
 * @module slotTable
 * The slots of one credential pool and the upkeep of their state: each
 * slot's effective status, the selector's availability and candidate list,
 * and the queue of rotations still to announce. They are recomputed when
 * something changes (a status the pool decides, a quota or cooldown event
 * of the shared trackers, an expiry found on a pick), so that the pool's
 * request path only picks. Kept apart from `CredentialPool`, which keeps
 * the request path and the public API.
 */

import type { Selector, UnavailableReason as SelectorReason } from '@switchyard/core-routing';
import type { Scheduler } from '@switchyard/runtime';
import type { EventEmitter } from 'eventemitter3';
import type { CredentialStatus } from '../credential.js';
import type { CooldownEvents, CredentialCooldowns } from './cooldownTracker.js';
import type { PoolEvents, RotationReason } from './poolEvents.js';
import { type Slot, statusMessage } from './poolSlot.js';
import type { QuotaTracker } from './quotaTracker.js';

const SELECTOR_REASON: Record<Exclude<CredentialStatus, 'active'>, SelectorReason> = {
  exhausted: 'exhausted',
  expired: 'unhealthy',
  disabled: 'disabled',
  error: 'unhealthy',
};

/** The collaborators a {@link SlotTable} shares with its pool. */
export interface SlotTableParts {
  provider: string;
  selector: Selector;
  scheduler: Scheduler;
  quotas: QuotaTracker;
  cooldowns: CredentialCooldowns;
  /** The pool's emitter: the table announces status changes, rotations and tracker events there. */
  events: EventEmitter<PoolEvents>;
  /** Persists a status the pool decided, off the request path. */
  persistStatus: (credentialId: string, status: CredentialStatus, message: string | null) => void;
}

/**
 * The slots of one pool, kept in line with the shared quota and cooldown
 * trackers from construction until {@link SlotTable.close}. Internal to the
 * pool: `CredentialPool` builds one and reads `slots` directly on the
 * request path.
 *
 * @example
 * ```ts
 * const table = new SlotTable({ provider, selector, scheduler, quotas, cooldowns, events, persistStatus });
 * table.slots.set(slot.stored.id, slot);
 * table.rebuildCandidates();
 * table.recompute(slot, true, true);
 * ```
 */
export class SlotTable {
  /** The pool's credentials by id. */
  readonly slots = new Map<string, Slot>();
  private readonly provider: string;
  private readonly selector: Selector;
  private readonly scheduler: Scheduler;
  private readonly quotas: QuotaTracker;
  private readonly cooldowns: CredentialCooldowns;
  private readonly events: EventEmitter<PoolEvents>;
  private readonly persistStatus: SlotTableParts['persistStatus'];
  private pendingRotations: { from: string; reason: RotationReason }[] = [];
  private readonly detach: (() => void)[] = [];

  constructor(parts: SlotTableParts) {
    this.provider = parts.provider;
    this.selector = parts.selector;
    this.scheduler = parts.scheduler;
    this.quotas = parts.quotas;
    this.cooldowns = parts.cooldowns;
    this.events = parts.events;
    this.persistStatus = parts.persistStatus;
    this.listen();
  }

  /** Whether a status change still waits for the next pick to announce its rotation. */
  get rotationsPending(): boolean {
    return this.pendingRotations.length > 0;
  }

  /** Stops listening to the shared trackers. */
  close(): void {
    for (const off of this.detach.splice(0)) off();
  }

  /** Sets the stored status in memory (the caller persists it). */
  setStoredStatus(slot: Slot, status: CredentialStatus, message: string): void {
    slot.stored = { ...slot.stored, status, status_message: message };
    this.recompute(slot, false);
  }

  /**
   * Brings the selector and the status in line with the credential's state,
   * and announces a change. `persist` writes a status the pool found itself
   * (the clock passed `expires_at`, the quota ran out or reset) back to the
   * store, so that restarts and other readers see it. `added` marks a
   * credential that just joined (its event has `previous: null`).
   */
  recompute(slot: Slot, persist: boolean, added = false): void {
    const id = slot.stored.id;
    const previous = slot.status;
    const status = this.effectiveStatus(slot, this.scheduler.now());
    const coolingUntil = this.cooldowns.coolingUntil(id);
    if (status !== 'active') this.selector.markUnavailable(id, SELECTOR_REASON[status]);
    else if (coolingUntil !== undefined) this.selector.markUnavailable(id, 'cooldown', coolingUntil);
    else this.selector.markAvailable(id);
    slot.status = status;
    slot.message = status === slot.stored.status ? (slot.stored.status_message ?? null) : statusMessage(slot, status, this.quotas);
    if (status === previous && !added) return;
    if (!added && previous === 'active') this.queueRotation(id, status === 'error' ? 'error' : (status as RotationReason));
    this.events.emit('credential:status', {
      provider: this.provider,
      credentialId: id,
      status,
      previous: added ? null : previous,
      message: slot.message,
    });
    const derived = status === 'expired' || status === 'exhausted' || slot.stored.status === 'exhausted';
    if (persist && status !== slot.stored.status && derived) {
      slot.stored = { ...slot.stored, status, ...(slot.message === null ? {} : { status_message: slot.message }) };
      this.persistStatus(id, status, slot.message);
    }
  }

  /** Announces the queued rotations as moves to `to`, the credential just picked. */
  announceRotations(to: string): void {
    const rotations = this.pendingRotations;
    this.pendingRotations = [];
    for (const { from, reason } of rotations) {
      if (from !== to) this.events.emit('credential:rotated', { provider: this.provider, from, to, reason });
    }
  }

  /** Hands the selector the slots as candidates (after one joined, left or changed priority). */
  rebuildCandidates(): void {
    const candidates = [...this.slots.values()]
      .map((slot) => ({ id: slot.stored.id, priority: slot.stored.priority }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.selector.setCandidates(candidates);
    for (const slot of this.slots.values()) {
      if (this.selector.strategy === 'quota_aware')
        this.selector.setRemainingQuota(slot.stored.id, this.quotas.snapshot(slot.stored.id).remaining ?? undefined);
    }
  }

  private listen(): void {
    const on = <E extends keyof CooldownEvents>(event: E, handler: (...args: CooldownEvents[E]) => void) => {
      this.cooldowns.events.on(event, handler as never);
      this.detach.push(() => this.cooldowns.events.off(event, handler as never));
    };
    on('cooldown:start', ({ key, until, reason }) => {
      const slot = this.slots.get(key);
      if (!slot) return;
      this.recompute(slot, false);
      this.queueRotation(key, reason === 'rate_limited' ? 'rate_limited' : reason === 'quota_exceeded' ? 'exhausted' : 'error');
      this.events.emit('cooldown:start', { provider: this.provider, credentialId: key, until, reason });
    });
    on('cooldown:end', ({ key }) => {
      const slot = this.slots.get(key);
      if (!slot) return;
      this.recompute(slot, false);
      this.events.emit('cooldown:end', { provider: this.provider, credentialId: key });
    });
    const onQuota = (event: PoolEvents['quota:update'][0]) => {
      const slot = this.slots.get(event.credentialId);
      if (!slot) return;
      if (this.selector.strategy === 'quota_aware') this.selector.setRemainingQuota(event.credentialId, event.remaining ?? undefined);
      this.events.emit('quota:update', event);
      this.recompute(slot, true);
    };
    this.quotas.events.on('quota:update', onQuota);
    this.detach.push(() => this.quotas.events.off('quota:update', onQuota));
  }

  private effectiveStatus(slot: Slot, now: number): CredentialStatus {
    const stored = slot.stored.status;
    if (stored === 'disabled' || stored === 'error' || stored === 'expired') return stored;
    if (slot.expiresAtMs <= now) return 'expired';
    if (this.quotas.isExhausted(slot.stored.id)) return 'exhausted';
    return 'active';
  }

  private queueRotation(from: string, reason: RotationReason): void {
    if (this.pendingRotations.length >= 64) this.pendingRotations.shift();
    this.pendingRotations.push({ from, reason });
  }
}
