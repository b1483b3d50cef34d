/**
 * @module postgresQuotaStore
 * The PostgreSQL `QuotaStore`: each delta is one atomic
 * `INSERT ... ON CONFLICT ... DO UPDATE ... RETURNING` that applies
 * `applyDelta`'s period rules inside the database, so concurrent adds from
 * any number of nodes are all counted and each gets the exact new total.
 */
import { type PgConnection, poolFor, runMigrations } from '@switchyard/core-routing/postgres';
import type pg from 'pg';
import { CredentialsError } from '../errors.js';
import { checkDelta, type QuotaDelta, type QuotaStore, type QuotaUsage } from '../store/quotaStore.js';
import { CREDENTIALS_MIGRATIONS } from './schema.js';

/** Options of {@link PostgresQuotaStore.open}. */
export interface PostgresQuotaStoreOptions {
  /** A connection string or `pg` client settings (used when no `pool` is given). */
  connection?: PgConnection;
  /** A shared pool; the store does not end it. */
  pool?: pg.Pool;
  /** Size of the store's own pool (default 4). */
  max?: number;
}

/**
 * The same rules as `applyDelta`: no period adds; a newer period starts
 * over at the delta; an older one changes nothing; the same period adds.
 */
const ADD = `
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
  RETURNING used, period_start`;

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

  private constructor(
    private readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
  ) {}

  /** Connects and applies the migrations. */
  static async open(options: PostgresQuotaStoreOptions): Promise<PostgresQuotaStore> {
    if (!options.pool && !options.connection) {
      throw new CredentialsError('invalid_config', 'PostgresQuotaStore needs a connection or a pool', { field: 'connection' });
    }
    const { pool, owned } = poolFor(options.connection ?? {}, options.pool, options.max ?? 4);
    try {
      await runMigrations(pool, 'credentials', CREDENTIALS_MIGRATIONS);
    } catch (error) {
      if (owned) await pool.end();
      throw new CredentialsError('store_failed', (error as Error).message, { cause: error });
    }
    return new PostgresQuotaStore(pool, owned);
  }

  async load(): Promise<Map<string, QuotaUsage>> {
    const { rows } = await this.query<UsageRow & { id: string }>('SELECT id, used, period_start FROM switchyard_quota');
    return new Map(rows.map((row) => [row.id, usageOf(row)]));
  }

  async add(deltas: readonly QuotaDelta[]): Promise<Map<string, QuotaUsage>> {
    for (const delta of deltas) checkDelta(delta);
    const out = new Map<string, QuotaUsage>();
    // One statement per delta, in order: two deltas of one id cannot share an INSERT ... ON CONFLICT.
    for (const delta of deltas) {
      const { rows } = await this.query<UsageRow>(ADD, [delta.id, delta.tokens, delta.period_start]);
      out.set(delta.id, usageOf(rows[0]!));
    }
    return out;
  }

  async set(id: string, usage: QuotaUsage): Promise<void> {
    checkDelta({ id, tokens: usage.used, period_start: usage.period_start });
    await this.query(
      `INSERT INTO switchyard_quota (id, used, period_start) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET used = EXCLUDED.used, period_start = EXCLUDED.period_start, updated_at = now()`,
      [id, usage.used, usage.period_start],
    );
  }

  async remove(id: string): Promise<void> {
    await this.query('DELETE FROM switchyard_quota WHERE id = $1', [id]);
  }

  /** Ends the pool when the store made it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
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
