/**
 * @module cooldownStateStore
 * The port behind which cooldown periods are shared. One node starts a
 * cooldown, writes it here, and every other node sharing the store is told
 * of it and applies it to its own in-memory view, so the request path never
 * waits on the store. The in-memory adapter serves one process; the
 * PostgreSQL adapter (`@switchyard/core-routing/postgres`) serves many, with
 * LISTEN/NOTIFY for {@link CooldownStateStore.subscribe}.
 */
import { RoutingError } from '../errors.js';

/** Why a key is cooling down. */
export type CooldownReason = 'rate_limit' | 'error' | 'manual';

/** Every {@link CooldownReason}. */
export const COOLDOWN_REASONS: readonly CooldownReason[] = ['rate_limit', 'error', 'manual'];

/** What ended a cooldown: its end passing, a forced recovery, or a passing health check after the end. */
export type CooldownEndCause = 'expiry' | 'recover' | 'health_check';

/** One cooldown period of one key. Times are epoch milliseconds. */
export interface CooldownPeriod {
  key: string;
  reason: CooldownReason;
  startedAt: number;
  endsAt: number;
  /** The reason an operator gave for a manual cooldown, as given (at most {@link MAX_COOLDOWN_NOTE} characters). */
  note?: string;
}

/** The longest {@link CooldownPeriod.note}. */
export const MAX_COOLDOWN_NOTE = 200;

/**
 * A change to the stored periods, delivered to subscribers in the order the
 * store applied them. `delete` carries the period that was removed, so a
 * node can tell the end of the period it holds from the end of one it has
 * already replaced.
 */
export type CooldownStoreChange =
  | { type: 'set'; period: CooldownPeriod }
  | { type: 'delete'; period: CooldownPeriod; endedBy: CooldownEndCause };

/** Options of {@link CooldownStateStore.delete}. */
export interface CooldownDeleteOptions {
  /**
   * Delete only if the stored period is this one (same reason, start and
   * end). A node ending a period it saw must not remove a newer period
   * another node has since written.
   */
  ifMatches?: CooldownPeriod;
  /** Passed on to subscribers. Default `recover`. */
  endedBy?: CooldownEndCause;
}

/**
 * Where cooldown periods live, at most one per key. Every adapter runs the
 * suite in `@switchyard/core-routing/contract`.
 *
 * @example
 * ```ts
 * const store = new MemoryCooldownStateStore();
 * const a = new CooldownManager({ store });
 * const b = new CooldownManager({ store });   // another "node"
 * a.start(); b.start();
 * a.cooldown('openai', 60_000);
 * await a.flush();                            // b.isCooling('openai') is now true
 * ```
 */
export interface CooldownStateStore {
  get(key: string): Promise<CooldownPeriod | undefined>;
  /** Creates or replaces the period of `period.key`. */
  set(period: CooldownPeriod): Promise<void>;
  /** Removes the period of `key`; resolves true when one was removed. */
  delete(key: string, options?: CooldownDeleteOptions): Promise<boolean>;
  /** Every stored period, in no particular order. */
  list(): Promise<CooldownPeriod[]>;
  /**
   * Calls `listener` for every change, including this handle's own writes,
   * in the order the store applied them. Returns the unsubscribe function.
   */
  subscribe(listener: (change: CooldownStoreChange) => void): () => void;
}

/** Whether two periods are the same period (not merely of the same key). */
export function samePeriod(a: CooldownPeriod, b: CooldownPeriod): boolean {
  return a.key === b.key && a.reason === b.reason && a.startedAt === b.startedAt && a.endsAt === b.endsAt;
}

/**
 * Checks a period from an untrusted source (a config file, a store row, an
 * API body) and returns a plain copy. Throws `RoutingError` with code
 * `invalid_argument` naming the field.
 */
export function parseCooldownPeriod(value: unknown, where = 'period'): CooldownPeriod {
  if (typeof value !== 'object' || value === null) throw new RoutingError('invalid_argument', `${where} must be an object`);
  const { key, reason, startedAt, endsAt } = value as Record<string, unknown>;
  if (typeof key !== 'string' || key.length === 0) throw new RoutingError('invalid_argument', `${where}.key must be a non-empty string`);
  if (!COOLDOWN_REASONS.includes(reason as CooldownReason)) {
    throw new RoutingError('invalid_argument', `${where}.reason must be one of ${COOLDOWN_REASONS.join(', ')}`);
  }
  if (typeof startedAt !== 'number' || !Number.isFinite(startedAt)) {
    throw new RoutingError('invalid_argument', `${where}.startedAt must be a finite number (epoch ms)`);
  }
  if (typeof endsAt !== 'number' || !Number.isFinite(endsAt) || endsAt < startedAt) {
    throw new RoutingError('invalid_argument', `${where}.endsAt must be a finite number (epoch ms) not before startedAt`);
  }
  const { note } = value as Record<string, unknown>;
  if (note !== undefined && note !== null && (typeof note !== 'string' || note.length > MAX_COOLDOWN_NOTE)) {
    throw new RoutingError('invalid_argument', `${where}.note must be a string of at most ${MAX_COOLDOWN_NOTE} characters`);
  }
  return { key, reason: reason as CooldownReason, startedAt, endsAt, ...(typeof note === 'string' ? { note } : {}) };
}

/**
 * The in-memory {@link CooldownStateStore}: the default of a
 * `CooldownManager`, and a shared store for several managers in one process
 * (tests, workers on one thread). Subscribers are told of changes on a
 * microtask, as a networked store would tell them later, never from inside
 * the write.
 */
export class MemoryCooldownStateStore implements CooldownStateStore {
  private readonly periods = new Map<string, CooldownPeriod>();
  private readonly listeners = new Set<(change: CooldownStoreChange) => void>();

  async get(key: string): Promise<CooldownPeriod | undefined> {
    const period = this.periods.get(key);
    return period && { ...period };
  }

  async set(period: CooldownPeriod): Promise<void> {
    const copy = parseCooldownPeriod(period);
    this.periods.set(copy.key, copy);
    this.notify({ type: 'set', period: { ...copy } });
  }

  async delete(key: string, options: CooldownDeleteOptions = {}): Promise<boolean> {
    const stored = this.periods.get(key);
    if (!stored) return false;
    if (options.ifMatches && !samePeriod(stored, options.ifMatches)) return false;
    this.periods.delete(key);
    this.notify({ type: 'delete', period: { ...stored }, endedBy: options.endedBy ?? 'recover' });
    return true;
  }

  async list(): Promise<CooldownPeriod[]> {
    return [...this.periods.values()].map((period) => ({ ...period }));
  }

  subscribe(listener: (change: CooldownStoreChange) => void): () => void {
    // A wrapper per subscription, so one function subscribed twice is two subscriptions.
    const entry = (change: CooldownStoreChange) => listener(change);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  private notify(change: CooldownStoreChange): void {
    const listeners = [...this.listeners];
    queueMicrotask(() => {
      for (const listener of listeners) {
        if (!this.listeners.has(listener)) continue;
        try {
          listener(change);
        } catch {
          // One failing subscriber must not starve the others; subscribers report their own errors.
        }
      }
    });
  }
}
