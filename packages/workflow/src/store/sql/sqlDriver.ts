/**
 * @module sqlDriver
 * What the shared SQL store needs from a database: a session that runs
 * statements (written with `?` placeholders) and transactions with a
 * per-chain lock. The SQLite and PostgreSQL adapters are thin drivers.
 */

/** A row as the driver returns it. */
export type SqlRow = Record<string, unknown>;

/** Runs statements on one connection. */
export interface SqlSession {
  /** Rows of a query (including `INSERT … RETURNING`). */
  all(sql: string, params?: readonly unknown[]): Promise<SqlRow[]>;
  /** Runs a statement; resolves with the number of rows changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
}

/** A database behind the SQL workflow store. */
export interface SqlDriver {
  readonly dialect: 'sqlite' | 'postgres';
  /** Autocommit session for reads outside transactions. */
  readonly session: SqlSession;
  /** Runs `fn` in a transaction that serializes writers; commits on success, rolls back on error. */
  transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /** Serializes transactions on one chain until the transaction ends. */
  lockChain(session: SqlSession, chain: string): Promise<void>;
  close(): Promise<void>;
}
