/**
 * @module postgresClientKeyStore
 * A cluster's client keys and budgets in PostgreSQL (the gateway's own
 * migrations, `clusterSchema.ts`). Each write is one statement that also
 * announces the key's id on a NOTIFY channel; every node LISTENs, re-reads
 * the row and hands it to its guard, so a key revoked on one node is refused
 * on all of them within milliseconds. After a lost LISTEN connection comes
 * back, every key is read again (notifications sent meanwhile are lost).
 *
 * As the budget ledger it admits against the shared total: each admission
 * is one call of `switchyard_client_key_reserve`, which queues on the key's
 * budget row, so N nodes admit exactly as one would.
 */
import { type PgConnection, PgListener, runMigrations } from '@switchyard/runtime/postgres';
import type pg from 'pg';
import { GATEWAY_MIGRATION_COMPONENT, GATEWAY_MIGRATIONS } from '../gateway/clusterSchema.js';
import { type ClientKeyRecord, ClientKeyRecordSchema } from './clientKeyRecord.js';
import type { BudgetAnswer, BudgetLedger, BudgetReservation, BudgetUse, ClientKeyStore } from './clientKeyStore.js';

/** Options of {@link PostgresClientKeyStore.open}. */
export interface PostgresClientKeyStoreOptions {
  /** The cluster's pool; the store never ends it. */
  pool: pg.Pool;
  /** For the LISTEN connection. */
  connection: PgConnection;
  /** NOTIFY channel of changed keys (database-wide: one per deployment). */
  channel: string;
  applicationName?: string;
  /** How long a reservation whose request never settles holds its units (default 10 minutes). */
  reservationTtlMs?: number;
  /** A lost LISTEN connection, an unreadable row, a failed settlement. */
  onError?: (error: Error) => void;
}

const UPSERT = `
  WITH written AS (
    INSERT INTO switchyard_client_keys (id, secret_digest, record) VALUES ($1, $2, $3)
    ON CONFLICT (id) DO UPDATE SET record = EXCLUDED.record, updated_at = now()
    RETURNING id)
  SELECT pg_notify($4, id) FROM written`;

/** Ends a reservation and adds what the request used, in the period it was admitted in (none once a new one began). */
const SETTLE = `
  WITH released AS (DELETE FROM switchyard_client_key_reservations WHERE reservation = $1)
  UPDATE switchyard_client_key_budgets SET used = used + $3 WHERE id = $2 AND period = $4 RETURNING used`;

/**
 * Client keys and budgets shared by every node on one PostgreSQL database.
 *
 * @example
 * ```ts
 * const store = await PostgresClientKeyStore.open({ pool, connection: url, channel: 'svc_client_keys_v1' });
 * const guard = await ClientKeyGuard.open({ store, ledger: store, clock });
 * ```
 */
export class PostgresClientKeyStore implements ClientKeyStore, BudgetLedger {
  private listener: PgListener | undefined;
  private readonly watchers = new Set<(record: ClientKeyRecord) => void>();
  /** The use this node last heard of, per key (answers to its own admissions and settlements). */
  private readonly uses = new Map<string, BudgetUse>();
  private closed = false;

  private constructor(private readonly options: PostgresClientKeyStoreOptions) {}

  /** Applies the gateway's migrations and LISTENs for changed keys. */
  static async open(options: PostgresClientKeyStoreOptions): Promise<PostgresClientKeyStore> {
    await runMigrations(options.pool, GATEWAY_MIGRATION_COMPONENT, GATEWAY_MIGRATIONS);
    const store = new PostgresClientKeyStore(options);
    store.listener = await PgListener.start({
      connection: options.connection,
      channels: [options.channel],
      applicationName: options.applicationName ?? 'switchyard-client-keys',
      onNotification: (_channel, id) => void store.changed(id),
      onReconnect: () => store.reloadAll(),
      ...(options.onError ? { onError: options.onError } : {}),
    });
    return store;
  }

  /** The LISTEN connection's state. */
  get listenerState(): Pick<PgListener, 'connected' | 'reconnects'> | undefined {
    return this.listener;
  }

  async load(): Promise<ClientKeyRecord[]> {
    const { rows } = await this.options.pool.query<{ record: unknown; last_used_at: Date | null }>(
      'SELECT record, last_used_at FROM switchyard_client_keys',
    );
    return rows.flatMap((row) => this.parse(row) ?? []);
  }

  async put(record: ClientKeyRecord): Promise<void> {
    const { last_used_at: _lastUsed, ...stored } = record;
    await this.options.pool.query(UPSERT, [record.id, record.secret_digest, JSON.stringify(stored), this.options.channel]);
  }

  watch(listener: (record: ClientKeyRecord) => void): () => void {
    const entry = (record: ClientKeyRecord) => listener(record);
    this.watchers.add(entry);
    return () => {
      this.watchers.delete(entry);
    };
  }

  async recordLastUsed(lastUsed: ReadonlyMap<string, string>): Promise<void> {
    if (lastUsed.size === 0) return;
    await this.options.pool.query(
      `UPDATE switchyard_client_keys k SET last_used_at = GREATEST(k.last_used_at, u.at)
       FROM unnest($1::text[], $2::timestamptz[]) AS u (id, at) WHERE k.id = u.id`,
      [[...lastUsed.keys()], [...lastUsed.values()]],
    );
  }

  async reserve(request: BudgetReservation): Promise<BudgetAnswer> {
    const { rows } = await this.options.pool.query<{ admitted: boolean; used: string }>(
      'SELECT admitted, used FROM switchyard_client_key_reserve($1, $2, $3, $4, $5, $6)',
      [request.keyId, request.reservation, request.units, request.limit, request.period, this.options.reservationTtlMs ?? 600_000],
    );
    const row = rows[0]!;
    this.heard(request.keyId, request.period, Number(row.used));
    return { admitted: row.admitted, used: Number(row.used) };
  }

  settle(request: BudgetReservation, used: number): void {
    this.options.pool
      .query<{ used: string }>(SETTLE, [request.reservation, request.keyId, used, request.period])
      .then(({ rows }) => {
        if (rows[0]) this.heard(request.keyId, request.period, Number(rows[0].used));
      })
      // The reservation lapses with its ttl; the request's use is lost, which the log says.
      .catch((error: Error) => this.options.onError?.(new Error(`settling a client key's budget failed: ${error.message}`)));
  }

  used(keyId: string, period: string): number {
    const use = this.uses.get(keyId);
    return use && use.period === period ? use.used : 0;
  }

  /** Stops listening; the pool is the cluster's. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watchers.clear();
    await this.listener?.close();
  }

  private heard(keyId: string, period: string, used: number): void {
    const known = this.uses.get(keyId);
    if (!known || known.period < period || (known.period === period && used > known.used)) this.uses.set(keyId, { period, used });
  }

  private parse(row: { record: unknown; last_used_at: Date | null }): ClientKeyRecord | undefined {
    const parsed = ClientKeyRecordSchema.safeParse({ ...(row.record as object), last_used_at: row.last_used_at?.toISOString() ?? null });
    if (parsed.success) return parsed.data;
    this.options.onError?.(new Error(`a client key row could not be read: ${parsed.error.message}`));
    return undefined;
  }

  private async changed(id: string): Promise<void> {
    try {
      const { rows } = await this.options.pool.query<{ record: unknown; last_used_at: Date | null }>(
        'SELECT record, last_used_at FROM switchyard_client_keys WHERE id = $1',
        [id],
      );
      const record = rows[0] && this.parse(rows[0]);
      if (record) this.tell(record);
    } catch (error) {
      if (!this.closed) this.options.onError?.(error as Error);
    }
  }

  private async reloadAll(): Promise<void> {
    for (const record of await this.load()) this.tell(record);
  }

  private tell(record: ClientKeyRecord): void {
    for (const watcher of [...this.watchers]) {
      try {
        watcher(record);
      } catch {
        // One failing subscriber must not starve the others.
      }
    }
  }
}
