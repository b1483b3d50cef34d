/**
 * @module @switchyard/workflow/sqlite
 * The SQLite `WorkflowStore` (better-sqlite3, an optional peer dependency):
 * the embedded default, one file at `.agileplus/agileplus.db`. WAL mode,
 * `synchronous = FULL` (a committed transition survives a power cut, not
 * only a killed process), versioned migrations, and `BEGIN IMMEDIATE`
 * transactions so several processes sharing the file serialize their writes.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import type { SqlDriver, SqlSession } from './store/sql/sqlDriver.js';
import { SqlWorkflowStore } from './store/sql/sqlWorkflowStore.js';
import { Mutex } from './util/mutex.js';

/** The default database path, relative to the repository root. */
export const DEFAULT_SQLITE_PATH = join('.agileplus', 'agileplus.db');

/** Options of {@link SqliteWorkflowStore.open}. */
export interface SqliteWorkflowStoreOptions {
  /** Database file (default `<repoRoot>/.agileplus/agileplus.db`, or `:memory:`). */
  path?: string;
  /** Repository root the default path is relative to (default `process.cwd()`). */
  repoRoot?: string;
  /** How long to wait for another process's write lock (default 10 s). */
  busyTimeoutMs?: number;
}

function session(db: Database.Database): SqlSession {
  const cache = new Map<string, Database.Statement>();
  const prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  };
  return {
    async all(sql, params = []) {
      const stmt = prepare(sql);
      if (stmt.reader) return stmt.all(...params) as Record<string, unknown>[];
      stmt.run(...params);
      return [];
    },
    async run(sql, params = []) {
      const stmt = prepare(sql);
      if (stmt.reader) return stmt.all(...params).length;
      return stmt.run(...params).changes;
    },
  };
}

function sqliteDriver(db: Database.Database): SqlDriver {
  const mutex = new Mutex();
  const s = session(db);
  return {
    dialect: 'sqlite',
    session: s,
    // better-sqlite3 is synchronous; the mutex keeps one transaction at a time on this connection even though `fn` awaits.
    transaction: (fn) =>
      mutex.run(async () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const result = await fn(s);
          db.exec('COMMIT');
          return result;
        } catch (error) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw error;
        }
      }),
    // BEGIN IMMEDIATE already holds the database's write lock.
    lockChain: async () => undefined,
    close: async () => {
      await mutex.run(async () => db.close());
    },
  };
}

/**
 * Opens (creating and migrating) a SQLite workflow database.
 *
 * @example
 * ```ts
 * import { SqliteWorkflowStore } from '@switchyard/workflow/sqlite';
 * const store = await SqliteWorkflowStore.open({ repoRoot: '/path/to/repo' });
 * ```
 */
export const SqliteWorkflowStore = {
  async open(options: SqliteWorkflowStoreOptions = {}): Promise<SqlWorkflowStore> {
    const path = options.path ?? join(options.repoRoot ?? process.cwd(), DEFAULT_SQLITE_PATH);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path, { timeout: options.busyTimeoutMs ?? 10_000 });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    return SqlWorkflowStore.openWith(sqliteDriver(db));
  },
};

export { SqlWorkflowStore } from './store/sql/sqlWorkflowStore.js';
