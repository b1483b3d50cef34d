/**
 * @module @switchyard/workflow/postgres
 * The PostgreSQL `WorkflowStore` (`pg`, an optional peer dependency), for
 * several workflow servers over one database. Transactions take a
 * transaction-scoped advisory lock per chain (feature), so two servers
 * never apply conflicting transitions or fork a feature's audit chain.
 */
import pg from 'pg';
import type { SqlDriver, SqlSession } from './store/sql/sqlDriver.js';
import { SqlWorkflowStore } from './store/sql/sqlWorkflowStore.js';

/** Options of {@link PostgresWorkflowStore.open}. */
export interface PostgresWorkflowStoreOptions {
  /** A connection string (`postgres://user@host/db`), or give `pool`. */
  connectionString?: string;
  /** An existing pool; the store does not end it on close. */
  pool?: pg.Pool;
  /** Pool size when the store makes its own pool (default 5). */
  max?: number;
}

/** `?` placeholders become `$1, $2, …` (the store's SQL never has `?` inside literals). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function session(client: pg.Pool | pg.PoolClient): SqlSession {
  return {
    async all(sql, params = []) {
      return (await client.query(numbered(sql), params as unknown[])).rows;
    },
    async run(sql, params = []) {
      return (await client.query(numbered(sql), params as unknown[])).rowCount ?? 0;
    },
  };
}

function postgresDriver(pool: pg.Pool, ownsPool: boolean): SqlDriver {
  return {
    dialect: 'postgres',
    session: session(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(session(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async lockChain(s, chain) {
      // The schema is part of the key: stores in different schemas of one database never wait on each other.
      await s.all("SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':workflow:' || ?, 0))", [chain]);
    },
    async close() {
      if (ownsPool) await pool.end();
    },
  };
}

/**
 * Opens (and migrates) a PostgreSQL workflow store.
 *
 * @example
 * ```ts
 * import { PostgresWorkflowStore } from '@switchyard/workflow/postgres';
 * const store = await PostgresWorkflowStore.open({ connectionString: 'postgres://postgres@127.0.0.1/workflow' });
 * ```
 */
export const PostgresWorkflowStore = {
  async open(options: PostgresWorkflowStoreOptions): Promise<SqlWorkflowStore> {
    const pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString, max: options.max ?? 5 });
    // An idle client dropped by the server must not crash the process; the next query reconnects.
    if (!options.pool) pool.on('error', () => undefined);
    return SqlWorkflowStore.openWith(postgresDriver(pool, options.pool === undefined));
  },
};

export { SqlWorkflowStore } from './store/sql/sqlWorkflowStore.js';
