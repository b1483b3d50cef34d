/**
 * @module migrations
 * Versioned schema migrations for the PostgreSQL adapters. Each component
 * (cooldowns, credentials) keeps its own `switchyard_<component>_migrations`
 * table in the connection's `search_path`, and applies what is missing in
 * one transaction under a transaction-scoped advisory lock, so several nodes
 * starting at once apply each migration exactly once and the others wait.
 */
import type pg from 'pg';
import { RuntimeError } from '../errors.js';

/** One schema step. Migrations are append-only: never edit a released one, add the next. */
export interface Migration {
  version: number;
  name: string;
  statements: readonly string[];
}

const COMPONENT = /^[a-z][a-z0-9_]{0,39}$/;

/**
 * Applies every migration of `component` not yet recorded, and returns the
 * versions applied by this call (empty when another node got there first).
 *
 * @example
 * ```ts
 * await runMigrations(pool, 'cooldown', [{ version: 1, name: 'periods', statements: ['CREATE TABLE ...'] }]);
 * ```
 */
export async function runMigrations(pool: pg.Pool, component: string, migrations: readonly Migration[]): Promise<number[]> {
  if (!COMPONENT.test(component)) {
    throw new RuntimeError('invalid_argument', 'a migration component is 1 to 40 lower-case letters, digits or "_"');
  }
  const table = `switchyard_${component}_migrations`;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // The schema is part of the key: components in different schemas of one database never wait on each other.
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':switchyard-migrations:' || $1, 0))", [
      component,
    ]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${table} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    const done = new Set((await client.query<{ version: number }>(`SELECT version FROM ${table}`)).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      for (const statement of migration.statements) await client.query(statement);
      await client.query(`INSERT INTO ${table} (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new RuntimeError('store_failed', `migrating ${component} failed: ${(error as Error).message}`, { cause: error });
  } finally {
    client.release();
  }
}
