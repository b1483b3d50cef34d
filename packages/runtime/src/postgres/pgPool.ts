/**
 * @module pgPool
 * How the PostgreSQL adapters get their connections: the caller's pool, or
 * one of their own made from the connection settings.
 */
import pg from 'pg';

/** Where a PostgreSQL adapter connects: a connection string or `pg` client settings. */
export type PgConnection = string | pg.ClientConfig;

/** `pg` client settings for `connection`. */
export function clientConfig(connection: PgConnection): pg.ClientConfig {
  return typeof connection === 'string' ? { connectionString: connection } : { ...connection };
}

/**
 * The pool an adapter queries through: `given` when the caller shares one
 * (the adapter must not end it), else a new pool of `max` connections.
 *
 * @example
 * ```ts
 * const { pool, owned } = poolFor('postgres://postgres@127.0.0.1/app', undefined, 4);
 * if (owned) await pool.end();
 * ```
 */
export function poolFor(connection: PgConnection, given: pg.Pool | undefined, max: number): { pool: pg.Pool; owned: boolean } {
  if (given) return { pool: given, owned: false };
  // TCP keep-alive: a connection that died silently (a peer gone, a dropped route) is found in minutes, not at the kernel's retransmission limit.
  const pool = new pg.Pool({ keepAlive: true, ...clientConfig(connection), max });
  // An idle pooled connection dropped by the server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return { pool, owned: true };
}
