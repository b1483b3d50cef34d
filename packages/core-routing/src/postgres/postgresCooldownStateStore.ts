/**
 * @module postgresCooldownStateStore
 * The PostgreSQL `CooldownStateStore`: periods in one table, and every change
 * announced with NOTIFY from the statement that makes it, so the
 * notification is sent exactly when the change commits and reaches every
 * node's LISTEN connection in commit order (typically within milliseconds).
 * Subscribers of every handle, the writer's included, hear changes from the
 * LISTEN connection, so all handles see one order.
 *
 * When the LISTEN connection drops, changes made meanwhile are never
 * notified: on reconnection the store lists the table and reports the
 * difference from what it last reported (a new or changed period as `set`,
 * a vanished one as `delete` with `endedBy: 'recover'`). With
 * `resyncIntervalMs` it also does that periodically, which repairs a
 * notification lost without the connection dropping. A delete is reported
 * once: its notification, arriving after a resync already reported the
 * period gone, is dropped.
 */

import { every, type Scheduler, systemScheduler } from '@switchyard/runtime';
import { type Migration, type PgConnection, PgListener, poolFor, type ReconnectBackoff, runMigrations } from '@switchyard/runtime/postgres';
import type pg from 'pg';
import {
  type CooldownDeleteOptions,
  type CooldownEndCause,
  type CooldownPeriod,
  type CooldownStateStore,
  type CooldownStoreChange,
  parseCooldownPeriod,
  samePeriod,
} from '../cooldown/cooldownStateStore.js';
import { RoutingError } from '../errors.js';

/** The default NOTIFY channel of cooldown changes. */
export const DEFAULT_COOLDOWN_CHANNEL = 'svc_cooldown_events_v1';

/** NOTIFY refuses payloads of 8,000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7999;
const END_CAUSES: readonly CooldownEndCause[] = ['expiry', 'recover', 'health_check'];

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'cooldown periods',
    statements: [
      `CREATE TABLE switchyard_cooldowns (key TEXT PRIMARY KEY, reason TEXT NOT NULL, started_at DOUBLE PRECISION NOT NULL,
        ends_at DOUBLE PRECISION NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    ],
  },
  {
    version: 2,
    name: 'cooldown notes',
    // The operator's reason for a manual cooldown.
    statements: ['ALTER TABLE switchyard_cooldowns ADD COLUMN note TEXT'],
  },
];

/** Options of {@link PostgresCooldownStateStore.open}. */
export interface PostgresCooldownStateStoreOptions {
  /** Where the database is (a connection string or `pg` client settings); the LISTEN connection always uses it. */
  connection: PgConnection;
  /** A pool for reads and writes; the store does not end it. Default: a pool of `max` connections of its own. */
  pool?: pg.Pool;
  /** Size of the store's own pool (default 4). */
  max?: number;
  /** NOTIFY channel (default `svc_cooldown_events_v1`). Channels are database-wide: give each deployment (and test file) its own. */
  channel?: string;
  /** `application_name` of the LISTEN connection (default `switchyard-cooldowns`). */
  applicationName?: string;
  backoff?: ReconnectBackoff;
  /** Ping interval of the LISTEN connection (see {@link PgListener}). */
  pingIntervalMs?: number;
  /** How often the table is listed and compared with what subscribers were told (0, the default: only after a reconnection). */
  resyncIntervalMs?: number;
  scheduler?: Scheduler;
  /** The LISTEN connection dropped, a reconnection failed, or a notification could not be read. */
  onError?: (error: Error) => void;
}

interface Row {
  key: string;
  reason: string;
  started_at: number;
  ends_at: number;
  note: string | null;
}

const fromRow = (row: Row): CooldownPeriod =>
  parseCooldownPeriod({ key: row.key, reason: row.reason, startedAt: row.started_at, endsAt: row.ends_at, note: row.note });

/**
 * Cooldown periods shared by every node on one PostgreSQL database.
 *
 * @example
 * ```ts
 * import { CooldownManager } from '../cooldown/cooldownManager.js';
 * import { PostgresCooldownStateStore } from './postgresCooldownStateStore.js';
 *
 * const store = await PostgresCooldownStateStore.open({ connection: 'postgres://postgres@127.0.0.1/gateway' });
 * const cooldowns = new CooldownManager({ store });
 * cooldowns.start(); // a cooldown started on any node now holds here too
 * ```
 */
export class PostgresCooldownStateStore implements CooldownStateStore {
  private readonly listeners = new Set<(change: CooldownStoreChange) => void>();
  /** What subscribers were last told per key: the base of the difference reported after a reconnection. */
  private readonly known = new Map<string, CooldownPeriod>();
  /** Sequence number of the last notified change per key, so a resync keeps changes that overtook it. */
  private readonly changedAt = new Map<string, number>();
  private changes = 0;
  private listener: PgListener | undefined;
  private stopResync: (() => void) | undefined;
  private closed = false;
  /** Notifications that could not be read (a foreign or corrupt payload on the channel). */
  invalidNotifications = 0;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
    readonly channel: string,
    private readonly onError: (error: Error) => void,
  ) {}

  /** Connects, applies migrations, LISTENs and loads the current periods. */
  static async open(options: PostgresCooldownStateStoreOptions): Promise<PostgresCooldownStateStore> {
    const { pool, owned } = poolFor(options.connection, options.pool, options.max ?? 4);
    const store = new PostgresCooldownStateStore(
      pool,
      owned,
      options.channel ?? DEFAULT_COOLDOWN_CHANNEL,
      options.onError ?? (() => undefined),
    );
    try {
      await runMigrations(pool, 'cooldown', MIGRATIONS);
      store.listener = await PgListener.start({
        connection: options.connection,
        channels: [store.channel],
        applicationName: options.applicationName ?? 'switchyard-cooldowns',
        onNotification: (_channel, payload) => store.notified(payload),
        onReconnect: () => store.resync(),
        onError: store.onError,
        ...(options.backoff ? { backoff: options.backoff } : {}),
        ...(options.pingIntervalMs === undefined ? {} : { pingIntervalMs: options.pingIntervalMs }),
        ...(options.scheduler ? { scheduler: options.scheduler } : {}),
      });
      for (const period of await store.list()) store.known.set(period.key, period);
      if (options.resyncIntervalMs && options.resyncIntervalMs > 0) {
        store.stopResync = every(options.scheduler ?? systemScheduler, options.resyncIntervalMs, () =>
          store.resync().catch((error: Error) => store.onError(error)),
        );
      }
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** The LISTEN connection (its `connected`, `reconnects` and `backendPid`). */
  get listenerState(): Pick<PgListener, 'connected' | 'reconnects' | 'backendPid'> | undefined {
    return this.listener;
  }

  async get(key: string): Promise<CooldownPeriod | undefined> {
    const { rows } = await this.query<Row>('SELECT key, reason, started_at, ends_at, note FROM switchyard_cooldowns WHERE key = $1', [key]);
    return rows[0] && fromRow(rows[0]);
  }

  async set(period: CooldownPeriod): Promise<void> {
    const copy = parseCooldownPeriod(period);
    const payload = JSON.stringify({ type: 'set', period: copy });
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
      throw new RoutingError('invalid_argument', 'period.key is too long to announce with NOTIFY (8,000 bytes at most)');
    }
    await this.query(
      `WITH written AS (
         INSERT INTO switchyard_cooldowns (key, reason, started_at, ends_at, note) VALUES ($1, $2, $3, $4, $7)
         ON CONFLICT (key) DO UPDATE SET reason = EXCLUDED.reason, started_at = EXCLUDED.started_at, ends_at = EXCLUDED.ends_at,
           note = EXCLUDED.note, updated_at = now()
         RETURNING 1)
       SELECT pg_notify($5, $6) FROM written`,
      [copy.key, copy.reason, copy.startedAt, copy.endsAt, this.channel, payload, copy.note ?? null],
    );
  }

  async delete(key: string, options: CooldownDeleteOptions = {}): Promise<boolean> {
    const endedBy = options.endedBy ?? 'recover';
    if (!END_CAUSES.includes(endedBy)) throw new RoutingError('invalid_argument', `endedBy must be one of ${END_CAUSES.join(', ')}`);
    const params: unknown[] = [key, this.channel, endedBy];
    let condition = '';
    if (options.ifMatches) {
      const match = parseCooldownPeriod(options.ifMatches, 'ifMatches');
      if (match.key !== key) return false;
      params.push(match.reason, match.startedAt, match.endsAt);
      condition = 'AND reason = $4 AND started_at = $5 AND ends_at = $6';
    }
    const result = await this.query(
      `WITH removed AS (DELETE FROM switchyard_cooldowns WHERE key = $1 ${condition} RETURNING key, reason, started_at, ends_at)
       SELECT pg_notify($2, json_build_object('type', 'delete', 'endedBy', $3::text,
         'period', json_build_object('key', key, 'reason', reason, 'startedAt', started_at, 'endsAt', ends_at))::text)
       FROM removed`,
      params,
    );
    return (result.rowCount ?? 0) > 0;
  }

  async list(): Promise<CooldownPeriod[]> {
    const { rows } = await this.query<Row>('SELECT key, reason, started_at, ends_at, note FROM switchyard_cooldowns');
    return rows.map(fromRow);
  }

  subscribe(listener: (change: CooldownStoreChange) => void): () => void {
    // A wrapper per subscription, so one function subscribed twice is two subscriptions.
    const entry = (change: CooldownStoreChange) => listener(change);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /**
   * Lists the table and reports every difference from what subscribers were
   * last told. Runs by itself after the LISTEN connection comes back.
   */
  async resync(): Promise<void> {
    const since = this.changes;
    const periods = await this.list();
    const current = new Map(periods.map((p) => [p.key, p]));
    const overtaken = (key: string) => (this.changedAt.get(key) ?? -1) > since;
    for (const period of periods) {
      const before = this.known.get(period.key);
      if (!overtaken(period.key) && (!before || !samePeriod(before, period))) this.deliver({ type: 'set', period });
    }
    for (const [key, period] of [...this.known]) {
      if (!current.has(key) && !overtaken(key)) this.deliver({ type: 'delete', period, endedBy: 'recover' });
    }
  }

  /** Closes the LISTEN connection, and the pool when the store made it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopResync?.();
    this.listeners.clear();
    await this.listener?.close();
    if (this.ownsPool) await this.pool.end();
  }

  private async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new RoutingError('closed', 'the cooldown store is closed');
    try {
      return await this.pool.query<R>(sql, params);
    } catch (error) {
      throw new RoutingError('store_failed', `cooldown store: ${(error as Error).message}`, { cause: error });
    }
  }

  private notified(payload: string): void {
    let change: CooldownStoreChange;
    try {
      const parsed = JSON.parse(payload) as { type?: unknown; period?: unknown; endedBy?: unknown };
      const period = parseCooldownPeriod(parsed.period, 'notification period');
      if (parsed.type === 'set') change = { type: 'set', period };
      else if (parsed.type === 'delete' && END_CAUSES.includes(parsed.endedBy as CooldownEndCause)) {
        change = { type: 'delete', period, endedBy: parsed.endedBy as CooldownEndCause };
      } else throw new RoutingError('invalid_argument', 'notification type must be set or delete');
    } catch (error) {
      this.invalidNotifications++;
      this.onError(error as Error);
      return;
    }
    this.changedAt.set(change.period.key, ++this.changes);
    this.deliver(change);
  }

  private deliver(change: CooldownStoreChange): void {
    if (change.type === 'set') this.known.set(change.period.key, change.period);
    else {
      // One delete, one report. A delete of a period subscribers were not told of, or were already told ended (a
      // resync that listed the table after the delete committed and before its notification arrived reported it
      // as `recover`), is not news.
      const known = this.known.get(change.period.key);
      if (!known || !samePeriod(known, change.period)) return;
      this.known.delete(change.period.key);
    }
    for (const listener of [...this.listeners]) {
      if (!this.listeners.has(listener)) continue;
      try {
        listener({ ...change, period: { ...change.period } });
      } catch {
        // One failing subscriber must not starve the others; subscribers report their own errors.
      }
    }
  }
}
