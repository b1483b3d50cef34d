/**
 * @module poolSlot
 * A credential's place in its pool, and the views derived from it: the
 * status record, the status message, and why nothing could be handed out.
 * Kept apart from the pool so the pool reads as the request path.
 */
import { AllProvidersInCooldown } from '@switchyard/core-routing';
import {
  type Credential,
  type CredentialStatus,
  type CredentialStatusRecord,
  describeCredential,
  type UnavailableReason,
} from '../credential.js';
import { NoCredentials } from '../errors.js';
import type { CredentialCooldowns } from './cooldownTracker.js';
import type { AcquiredCredential } from './poolEvents.js';
import type { QuotaTracker } from './quotaTracker.js';

/** A credential in a pool. */
export interface Slot {
  /** The record as the store gave it (duplicates of it change nothing). */
  source: Credential;
  /** The working copy: the source plus statuses the pool decided and has not seen stored yet. */
  stored: Credential;
  acquired: AcquiredCredential;
  expiresAtMs: number;
  status: CredentialStatus;
  message: string | null;
  /** The last `error` failure's message (transient; not a status). */
  lastError: string | null;
  requests: number;
  lastUsedAt: number;
}

/** The status record of a slot: its credential without secrets, and its live state. */
export function statusRecord(slot: Slot, quotas: QuotaTracker, cooldowns: CredentialCooldowns): CredentialStatusRecord {
  const id = slot.stored.id;
  const coolingUntil = cooldowns.coolingUntil(id);
  const reason: UnavailableReason | null =
    slot.status !== 'active' ? (slot.status as UnavailableReason) : coolingUntil !== undefined ? 'cooldown' : null;
  return {
    ...describeCredential(slot.stored),
    status: slot.status,
    status_message: slot.message,
    quota: quotas.snapshot(id),
    available: reason === null,
    unavailable_reason: reason,
    cooldown_until: coolingUntil === undefined ? null : new Date(coolingUntil).toISOString(),
    last_error: slot.lastError,
    requests: slot.requests,
    last_used_at: slot.lastUsedAt === 0 ? null : new Date(slot.lastUsedAt).toISOString(),
  };
}

/** The message for a status the pool derived (or the stored one). */
export function statusMessage(slot: Slot, status: CredentialStatus, quotas: QuotaTracker): string | null {
  switch (status) {
    case 'expired':
      return slot.stored.status === 'expired'
        ? (slot.stored.status_message ?? 'token expired')
        : `token expired at ${slot.stored.expires_at}`;
    case 'exhausted': {
      const quota = quotas.snapshot(slot.stored.id);
      const usage = quota.limit === null ? ' upstream' : ` (${quota.used} of ${quota.limit} tokens)`;
      return `quota used up${usage}${quota.resets_at ? `; resets at ${quota.resets_at}` : ''}`;
    }
    case 'active':
      return null;
    default:
      return slot.stored.status_message ?? null;
  }
}

/**
 * The `NoCredentials` error for a failed pick: how many credentials are in
 * each state, and when the first one returns (a cooldown's end, a quota
 * reset), for `Retry-After`.
 */
export function explainNoCredentials(
  provider: string,
  slots: Iterable<Slot>,
  quotas: QuotaTracker,
  cooldowns: CredentialCooldowns,
  error: unknown,
  exclude: ReadonlySet<string> | undefined,
): NoCredentials {
  const counts = new Map<string, number>();
  let retryAt = Number.POSITIVE_INFINITY;
  for (const slot of slots) {
    const until = cooldowns.coolingUntil(slot.stored.id);
    const reason =
      slot.status !== 'active'
        ? slot.status
        : until !== undefined
          ? 'cooling down'
          : exclude?.has(slot.stored.id)
            ? 'already tried'
            : 'available';
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
    if (until !== undefined) retryAt = Math.min(retryAt, until);
    if (slot.status === 'exhausted') {
      const resets = quotas.snapshot(slot.stored.id).resets_at;
      if (resets) retryAt = Math.min(retryAt, Date.parse(resets));
    }
  }
  if (counts.size === 0) return new NoCredentials(provider, 'none is configured', undefined, { cause: error });
  if (error instanceof AllProvidersInCooldown) retryAt = Math.min(retryAt, error.retryAt);
  const detail = [...counts].map(([reason, count]) => `${count} ${reason}`).join(', ');
  return new NoCredentials(provider, detail, Number.isFinite(retryAt) ? retryAt : undefined, { cause: error });
}

/** Whether two records are the same (same revision and content: a watcher's echo). */
export function sameRecord(a: Credential, b: Credential): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A non-negative finite number, or undefined. */
export function finiteCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
