/**
 * @module postgresQuotaStore
 * The PostgreSQL `QuotaStore`: each delta is one atomic
 * `INSERT ... ON CONFLICT ... DO UPDATE ... RETURNING` that applies
 * `applyDelta`'s period rules inside the database, so concurrent adds from
 * any number of nodes are all counted and each gets the exact new total.
 *
 * The same statement announces the new total with `pg_notify` (sent when it
 * commits), and one LISTEN connection per store hears every node's totals
 * and hands them to `watch` subscribers: a limit crossed on one node is
 * seen on all of them within milliseconds, not at their next write.
 *
 * `reserve` is admission control on top (see `schema.ts` for the function
 * it calls): a request holds an estimate of its tokens from admission until
 * the add that settles it, which lets the reservation go in the same
 * statement. With it, use passes a limit by no more than what the requests
 * in flight use beyond their estimates, on any number of nodes.
 *
 * `abandon` lets go of reservations whose answer was lost. It cannot just
 * delete them: the `reserve` may not have committed yet (a backend still
 * waiting on the credential's row after the client's connection dropped),
 * and a delete would miss it. So it writes the reservation with no tokens:
 * an open one is emptied, and one not there yet is held as an empty
 * reservation whose id the late `reserve` then collides with (its insert
 * fails on the primary key, and its transaction, reservation and all, rolls
 * back). The two meet on the primary key's index, whichever comes first.
 * The empty row lapses with the reservation's ttl like any other.
 */
import type { PgConnection, PgListener, ReconnectBackoff } from '@switchyard/runtime/postgres';
import type pg from 'pg';
import { CredentialsError } from '../errors.js';
import {
  checkDelta,
  type QuotaDelta,
  type QuotaReservationAnswer,
  type QuotaReservationRequest,
  type QuotaStore,
  type QuotaTotal,
  type QuotaUsage,
} from '../store/quotaStore.js';
import { openListeningAdapter } from './listeningAdapter.js';

/** Options of {@link PostgresQuotaStore.open}. */
export interface PostgresQuotaStoreOptions {
  /** A connection string or `pg` client settings (used when no `pool` is given). */
  connection?: PgConnection;
  /** A shared pool; the store does not end it. */
  pool?: pg.Pool;
  /** Size of the store's own pool (default 4). */
  max?: number;
  /**
   * NOTIFY channel of committed totals (default `svc_quota_totals_v1`).
   * Channels are database-wide: give each deployment (and test file) its own.
   */
  channel?: string;
  /**
   * LISTEN to the channel, so `watch` subscribers hear every node's totals.
   * Default: true when `connection` is given (the LISTEN connection needs it).
   */
  listen?: boolean;
  /** `application_name` of the LISTEN connection (default `switchyard-quota`). */
  applicationName?: string;
  backoff?: ReconnectBackoff;
  /** The LISTEN connection dropped, a reconnection failed, or an announcement could not be read. */
  onError?: (error: Error) => void;
}

/** The default NOTIFY channel of committed quota totals. */
export const DEFAULT_QUOTA_CHANNEL = 'svc_quota_totals_v1';

/** NOTIFY refuses payloads of 8,000 bytes or more; the id is all that varies in size. */
const MAX_ID_BYTES = 7000;

/**
 * The same rules as `applyDelta`: no period adds; a newer period starts
 * over at the delta; an older one changes nothing; the same period adds.
 */
const ADD = `
  WITH released AS (DELETE FROM switchyard_quota_reservations WHERE reservation = ANY($5::text[])),
  written AS (
  INSERT INTO switchyard_quota AS q (id, used, period_start) VALUES ($1, $2, $3)
  ON CONFLICT (id) DO UPDATE SET
    used = CASE
      WHEN EXCLUDED.period_start IS NULL THEN q.used + EXCLUDED.used
      WHEN q.period_start IS NULL OR q.period_start < EXCLUDED.period_start THEN EXCLUDED.used
      WHEN q.period_start > EXCLUDED.period_start THEN q.used
      ELSE q.used + EXCLUDED.used END,
    period_start = CASE
      WHEN EXCLUDED.period_start IS NULL THEN NULL
      WHEN q.period_start IS NULL OR q.period_start < EXCLUDED.period_start THEN EXCLUDED.period_start
      ELSE q.period_start END,
    updated_at = now()
  RETURNING id, used, period_start)
  SELECT used, period_start,
    pg_notify($4, json_build_object('id', id, 'used', used, 'period_start', period_start, 'replaced', false)::text) IS NULL AS announced
  FROM written`;

/**
 * Empties reservations whose answer was lost, or holds their ids empty so a `reserve` arriving later fails
 * (see the module comment). Never deletes: a reservation not committed yet would be missed.
 */
const ABANDON = `
  INSERT INTO switchyard_quota_reservations AS r (reservation, id, tokens, expires_at)
  SELECT a.reservation, a.id, 0, clock_timestamp() + a.ttl_ms * interval '1 millisecond'
  FROM unnest($1::text[], $2::text[], $3::bigint[]) AS a (reservation, id, ttl_ms)
  ON CONFLICT (reservation) DO UPDATE SET tokens = 0`;

/** A replacement, announced as such so listeners may lower their totals. */
const SET = `
  WITH written AS (
    INSERT INTO switchyard_quota (id, used, period_start) VALUES ($1, $2, $3)
    ON CONFLICT (id) DO UPDATE SET used = EXCLUDED.used, period_start = EXCLUDED.period_start, updated_at = now()
    RETURNING id, used, period_start)
  SELECT pg_notify($4, json_build_object('id', id, 'used', used, 'period_start', period_start, 'replaced', true)::text)
  FROM written`;

interface UsageRow {
  id?: string;
  used: string;
  period_start: string | null;
}

const usageOf = (row: UsageRow): QuotaUsage => ({ used: Number(row.used), period_start: row.period_start });

/**
 * Quota usage shared by every node on one PostgreSQL database.
 *
 * @example
 * ```ts
 * import { PostgresQuotaStore } from '@switchyard/credentials/postgres';
 * const quotaStore = await PostgresQuotaStore.open({ connection: 'postgres://postgres@127.0.0.1/gateway' });
 * const manager = new CredentialManager({ store, quotaStore });
 * ```
 */
export class PostgresQuotaStore implements QuotaStore {
  private closed = false;
  private listener: PgListener | undefined;
  private readonly watchers = new Set<(total: QuotaTotal) => void>();
  /** Announcements that could not be read (a foreign or corrupt payload on the channel). */
  invalidNotifications = 0;
  /** Answers to `reserve` so far: admitted, refused (no room), failed (the database could not answer). */
  readonly admissions = { admitted: 0, refused: 0, failed: 0 };

  private constructor(
    private readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
    readonly channel: string,
    private readonly onError: (error: Error) => void,
  ) {}

  /** Connects and applies the migrations. */
  static async open(options: PostgresQuotaStoreOptions): Promise<PostgresQuotaStore> {
    const onError = options.onError ?? (() => undefined);
    const channel = options.channel ?? DEFAULT_QUOTA_CHANNEL;
    const { adapter: store, listener } = await openListeningAdapter(options, {
      name: 'PostgresQuotaStore',
      listensFor: 'quota totals',
      defaultMax: 4,
      defaultApplicationName: 'switchyard-quota',
      channel,
      make: (pool, owned) => new PostgresQuotaStore(pool, owned, channel, onError),
      onNotification: (store, payload) => store.notified(payload),
      // Totals announced while the connection was away are lost; nothing to replay: the next add's answer repairs them.
      onError,
    });
    store.listener = listener;
    return store;
  }

  /** The LISTEN connection (its `connected`, `reconnects` and `backendPid`), when the store listens. */
  get listenerState(): Pick<PgListener, 'connected' | 'reconnects' | 'backendPid'> | undefined {
    return this.listener;
  }

  watch(listener: (total: QuotaTotal) => void): () => void {
    // A wrapper per subscription, so one function subscribed twice is two subscriptions.
    const entry = (total: QuotaTotal) => listener(total);
    this.watchers.add(entry);
    return () => {
      this.watchers.delete(entry);
    };
  }

  async load(): Promise<Map<string, QuotaUsage>> {
    const { rows } = await this.query<UsageRow & { id: string }>('SELECT id, used, period_start FROM switchyard_quota');
    return new Map(rows.map((row) => [row.id, usageOf(row)]));
  }

  async add(deltas: readonly QuotaDelta[]): Promise<Map<string, QuotaUsage>> {
    for (const delta of deltas) checkAnnounceable(delta.id);
    for (const delta of deltas) checkDelta(delta);
    const out = new Map<string, QuotaUsage>();
    // One statement per delta, in order: two deltas of one id cannot share an INSERT ... ON CONFLICT.
    for (const delta of deltas) {
      const { rows } = await this.query<UsageRow>(ADD, [
        delta.id,
        delta.tokens,
        delta.period_start,
        this.channel,
        delta.reservations ?? [],
      ]);
      // No row: the credential was deleted (migration 4 writes no quota for it), so there is no total to give.
      if (rows[0]) out.set(delta.id, usageOf(rows[0]));
    }
    return out;
  }

  async reserve(request: QuotaReservationRequest): Promise<QuotaReservationAnswer> {
    checkAnnounceable(request.id);
    checkDelta({ id: request.id, tokens: request.tokens, period_start: request.period_start });
    if (!Number.isSafeInteger(request.limit) || request.limit < 0) {
      throw new CredentialsError('invalid_argument', 'a reservation needs a whole limit ≥ 0', { field: 'limit' });
    }
    const ttlMs = Math.max(1, Math.ceil(request.ttlMs));
    let rows: { admitted: boolean; used: string; reserved: string; period_start: string | null }[];
    try {
      ({ rows } = await this.query<{ admitted: boolean; used: string; reserved: string; period_start: string | null }>(
        'SELECT admitted, used, reserved, period_start FROM switchyard_quota_reserve($1, $2, $3, $4, $5, $6)',
        [request.id, request.reservation, request.tokens, request.limit, request.period_start, ttlMs],
      ));
    } catch (error) {
      this.admissions.failed++;
      throw error;
    }
    const row = rows[0]!;
    if (row.admitted) this.admissions.admitted++;
    else this.admissions.refused++;
    return { admitted: row.admitted, used: Number(row.used), reserved: Number(row.reserved), period_start: row.period_start };
  }

  async abandon(reservations: readonly QuotaReservationRequest[]): Promise<void> {
    // One row per id: a statement's ON CONFLICT DO UPDATE may not touch a row twice.
    const byId = new Map(reservations.map((request) => [request.reservation, request]));
    if (byId.size === 0) return;
    const abandoned = [...byId.values()];
    await this.query(ABANDON, [
      abandoned.map((request) => request.reservation),
      abandoned.map((request) => request.id),
      abandoned.map((request) => Math.max(1, Math.ceil(request.ttlMs))),
    ]);
  }

  async set(id: string, usage: QuotaUsage): Promise<void> {
    checkAnnounceable(id);
    checkDelta({ id, tokens: usage.used, period_start: usage.period_start });
    await this.query(SET, [id, usage.used, usage.period_start, this.channel]);
  }

  async remove(id: string): Promise<void> {
    await this.query(
      'WITH released AS (DELETE FROM switchyard_quota_reservations WHERE id = $1) DELETE FROM switchyard_quota WHERE id = $1',
      [id],
    );
  }

  /** Ends the pool when the store made it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watchers.clear();
    await this.listener?.close();
    if (this.ownsPool) await this.pool.end();
  }

  private notified(payload: string): void {
    let total: QuotaTotal;
    try {
      total = parseTotal(payload);
    } catch (error) {
      this.invalidNotifications++;
      this.onError(error as Error);
      return;
    }
    for (const watcher of [...this.watchers]) {
      if (!this.watchers.has(watcher)) continue;
      try {
        watcher({ ...total });
      } catch {
        // One failing subscriber must not starve the others.
      }
    }
  }

  private async query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new CredentialsError('closed', 'the quota store is closed');
    try {
      return await this.pool.query<R>(sql, params);
    } catch (error) {
      throw new CredentialsError('store_failed', `quota store: ${(error as Error).message}`, { cause: error });
    }
  }
}

function checkAnnounceable(id: string): void {
  if (typeof id === 'string' && Buffer.byteLength(id) > MAX_ID_BYTES) {
    throw new CredentialsError('invalid_argument', `a quota id is ${MAX_ID_BYTES} bytes at most (NOTIFY's payload limit)`, { field: 'id' });
  }
}

/** Reads one announcement; throws on anything but the shape the statements above send. */
function parseTotal(payload: string): QuotaTotal {
  const parsed = JSON.parse(payload) as Record<string, unknown>;
  const { id, used, period_start, replaced } = parsed;
  if (
    typeof id !== 'string' ||
    typeof used !== 'number' ||
    !Number.isFinite(used) ||
    used < 0 ||
    !(period_start === null || typeof period_start === 'string') ||
    typeof replaced !== 'boolean'
  ) {
    throw new CredentialsError('invalid_argument', 'a quota announcement needs id, used, period_start and replaced');
  }
  return { id, used, period_start, replaced };
}
