/**
 * @module quotaStore
 * The `QuotaStore` port: token usage per credential and reset period, kept
 * apart from the credential records because it changes on every request
 * while they change rarely. The quota tracker batches usage in memory and
 * adds it here off the request path.
 *
 * Adds are atomic per credential and carry the period they belong to, so a
 * late batch from a finished period never counts against the new one. The
 * memory adapter (here) and the file adapter (`fileQuotaStore.ts`) serve one process; the PostgreSQL adapter does
 * the same with `UPDATE ... RETURNING`, exact across nodes.
 */
import { CredentialsError } from '../errors.js';

/** Usage of one credential in its current period. */
export interface QuotaUsage {
  used: number;
  /** Start of the period (ISO 8601); null without a reset schedule. */
  period_start: string | null;
}

/** A total the store committed, as announced to {@link QuotaStore.watch} subscribers. */
export interface QuotaTotal extends QuotaUsage {
  id: string;
  /**
   * True when the total replaced the usage (`set`: a reset or a correction);
   * false when it is the result of an `add`, so it only ever grows within a
   * period.
   */
  replaced: boolean;
}

/** Tokens to add to one credential's usage in a period. */
export interface QuotaDelta {
  id: string;
  tokens: number;
  period_start: string | null;
  /**
   * Reservations ({@link QuotaStore.reserve}) these tokens settle: they are
   * let go in the same atomic write that adds the tokens, so no moment
   * counts a request twice or not at all.
   */
  reservations?: readonly string[];
}

/** One request's claim on a credential's shared quota ({@link QuotaStore.reserve}). */
export interface QuotaReservationRequest {
  /** The credential. */
  id: string;
  /** Unique id of the reservation; the `add` that settles the request lets it go. */
  reservation: string;
  /** Tokens held until the request settles: an estimate of what it will use (0 holds a place without tokens). */
  tokens: number;
  /** The credential's limit: the reservation is refused when committed use plus what is held reaches it. */
  limit: number;
  /** The period the request counts in; use from an earlier period does not count. */
  period_start: string | null;
  /** A reservation not settled within this long is let go (its node died mid-request). */
  ttlMs: number;
}

/** The store's answer to {@link QuotaStore.reserve}. */
export interface QuotaReservationAnswer {
  admitted: boolean;
  /** Committed use in the period, as the store decided. */
  used: number;
  /** Tokens held by open reservations, this one included when admitted. */
  reserved: number;
  /**
   * The period `used` is of: the request's, or a later one when the store
   * has moved on (another node's clock is ahead). Absent: the request's.
   */
  period_start?: string | null;
}

/**
 * Storage of quota usage.
 *
 * @example
 * ```ts
 * const quotas: QuotaStore = new MemoryQuotaStore();
 * const totals = await quotas.add([{ id: 'openai-1', tokens: 1200, period_start: '2026-03-01T00:00:00.000Z' }]);
 * ```
 */
export interface QuotaStore {
  /** Usage of every credential the store knows. */
  load(): Promise<Map<string, QuotaUsage>>;
  /**
   * Adds each delta atomically and returns the resulting usage of each id.
   * A delta for a newer period than the stored one starts that period at
   * its tokens; a delta for an older period is ignored. A delta without a
   * period (no schedule) always adds. A store that knows an id's credential
   * was deleted writes nothing for it and leaves it out of the answer.
   */
  add(deltas: readonly QuotaDelta[]): Promise<Map<string, QuotaUsage>>;
  /** Replaces one credential's usage (a reset, an operator correction). */
  set(id: string, usage: QuotaUsage): Promise<void>;
  /** Forgets a credential (it was deleted). */
  remove(id: string): Promise<void>;
  /**
   * Subscribes to every total committed by any writer of a shared store
   * (other nodes included), within milliseconds of the commit, so a limit
   * crossed anywhere is seen everywhere without waiting for the next `add`.
   * Optional: single-process stores have nothing to announce. Delivery is
   * best effort (a dropped connection loses announcements); the answers to
   * `add` stay authoritative. Returns the unsubscribe function.
   */
  watch?(listener: (total: QuotaTotal) => void): () => void;
  /**
   * Admission control for stores shared by several processes: atomically
   * checks that committed use plus what open reservations hold is below the
   * limit and, if so, records the reservation. Every admission of one
   * credential is serialised in the store, so a request is admitted only
   * when the quota has room that no other node's request already holds,
   * and use passes the limit by at most what the requests in flight use
   * beyond their estimates. Optional: a store of one process needs none
   * (its tracker sees every request the moment it reports).
   */
  reserve?(request: QuotaReservationRequest): Promise<QuotaReservationAnswer>;
  /**
   * Lets go of reservations whose `reserve` failed without a known outcome:
   * its statement may have committed and the answer been lost (a dropped
   * connection, a timeout after the commit), or may still commit. Each
   * reservation is let go if it was recorded, and refused if its `reserve`
   * reaches the store later. Idempotent: a reservation the store never
   * recorded is no error. Stores with `reserve` have it.
   */
  abandon?(reservations: readonly QuotaReservationRequest[]): Promise<void>;
  close(): Promise<void>;
}

/** Applies one delta to stored usage, by the period rules of {@link QuotaStore.add}. */
export function applyDelta(current: QuotaUsage | undefined, delta: QuotaDelta): QuotaUsage {
  if (delta.period_start === null) return { used: (current?.used ?? 0) + delta.tokens, period_start: null };
  if (!current || current.period_start === null || current.period_start < delta.period_start) {
    return { used: delta.tokens, period_start: delta.period_start };
  }
  if (current.period_start > delta.period_start) return current;
  return { used: current.used + delta.tokens, period_start: current.period_start };
}

/**
 * Quota usage in a `Map`.
 *
 * @example
 * ```ts
 * const manager = new CredentialManager({ store, quotaStore: new MemoryQuotaStore() });
 * ```
 */
export class MemoryQuotaStore implements QuotaStore {
  protected readonly usage = new Map<string, QuotaUsage>();

  async load(): Promise<Map<string, QuotaUsage>> {
    return new Map([...this.usage].map(([id, u]) => [id, { ...u }]));
  }

  async add(deltas: readonly QuotaDelta[]): Promise<Map<string, QuotaUsage>> {
    const out = new Map<string, QuotaUsage>();
    for (const delta of deltas) {
      checkDelta(delta);
      const next = applyDelta(this.usage.get(delta.id), delta);
      this.usage.set(delta.id, next);
      out.set(delta.id, { ...next });
    }
    await this.persist();
    return out;
  }

  async set(id: string, usage: QuotaUsage): Promise<void> {
    checkDelta({ id, tokens: usage.used, period_start: usage.period_start });
    this.usage.set(id, { ...usage });
    await this.persist();
  }

  async remove(id: string): Promise<void> {
    if (this.usage.delete(id)) await this.persist();
  }

  async close(): Promise<void> {}

  /** Hook for durable subclasses; the memory store keeps nothing. */
  protected async persist(): Promise<void> {}
}

/** Throws `invalid_argument` unless the delta's tokens are a whole number ≥ 0. */
export function checkDelta(delta: QuotaDelta): void {
  if (!Number.isSafeInteger(delta.tokens) || delta.tokens < 0) {
    throw new CredentialsError('invalid_argument', `quota usage of ${JSON.stringify(delta.id)} must be a whole number ≥ 0`, {
      field: 'tokens',
    });
  }
}
