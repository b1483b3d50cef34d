/**
 * @module postgresRefreshLock
 * The cross-node `RefreshLock`: a session advisory lock per credential, so
 * one node at a time refreshes a credential and the others, once they get
 * the lock, find the new token in the store and take it instead of
 * spending the refresh token again. The lock is held on a connection of
 * its own pool (never the store's: a holder needs store connections to
 * finish, and waiters must not starve it of them); within one process,
 * waiters for one credential queue in memory and use one connection
 * between them. A node that dies while holding the lock loses its session,
 * and with it the lock.
 */
import { type PgConnection, poolFor } from '@switchyard/runtime/postgres';
import type pg from 'pg';
import { CredentialsError } from '../errors.js';
import type { RefreshLock } from '../manager/credentialWriter.js';
import { KeyedMutex } from '../util/keyedMutex.js';

/** Options of {@link PostgresRefreshLock.open}. */
export interface PostgresRefreshLockOptions {
  connection?: PgConnection;
  /** A pool for the lock connections only (not the store's); the lock does not end it. */
  pool?: pg.Pool;
  /** Connections of its own pool: how many credentials may be refreshing (or waiting) at once (default 4). */
  max?: number;
  /**
   * Part of the lock key, with the schema and the credential id, so that
   * unrelated users of one database (or parallel tests) never wait on each
   * other. Default `switchyard-refresh`.
   */
  namespace?: string;
  /** Give up waiting for another node's refresh after this (default 60,000 ms). */
  lockTimeoutMs?: number;
}

const KEY = "hashtextextended(current_schema() || ':' || $1 || ':' || $2, 0)";

/**
 * One refresh per credential across every node.
 *
 * @example
 * ```ts
 * const refreshLock = await PostgresRefreshLock.open({ connection: 'postgres://postgres@127.0.0.1/gateway' });
 * const manager = new CredentialManager({ store, refreshLock });
 * ```
 */
export class PostgresRefreshLock implements RefreshLock {
  private readonly local = new KeyedMutex();
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
    readonly namespace: string,
    private readonly lockTimeoutMs: number,
  ) {}

  /** Makes the lock (no connection is opened until the first `acquire`). */
  static async open(options: PostgresRefreshLockOptions): Promise<PostgresRefreshLock> {
    if (!options.pool && !options.connection) {
      throw new CredentialsError('invalid_config', 'PostgresRefreshLock needs a connection or a pool', { field: 'connection' });
    }
    const timeout = options.lockTimeoutMs ?? 60_000;
    if (!Number.isSafeInteger(timeout) || timeout <= 0) {
      throw new CredentialsError('invalid_config', 'lockTimeoutMs must be a whole number of milliseconds > 0', { field: 'lockTimeoutMs' });
    }
    const { pool, owned } = poolFor(options.connection ?? {}, options.pool, options.max ?? 4);
    return new PostgresRefreshLock(pool, owned, options.namespace ?? 'switchyard-refresh', timeout);
  }

  /** Resolves with the release function once this node holds the credential's lock. */
  acquire(credentialId: string): Promise<() => Promise<void>> {
    if (this.closed) return Promise.reject(new CredentialsError('closed', 'the refresh lock is closed'));
    return new Promise((resolve, reject) => {
      // The in-process queue holds until release() is called, so a process waits on one connection per credential.
      this.local
        .run(credentialId, async () => {
          let client: pg.PoolClient;
          try {
            client = await this.pool.connect();
          } catch (error) {
            throw new CredentialsError('store_failed', `refresh lock: ${(error as Error).message}`, { cause: error });
          }
          try {
            await client.query("SELECT set_config('lock_timeout', $1, false)", [`${this.lockTimeoutMs}ms`]);
            await client.query(`SELECT pg_advisory_lock(${KEY})`, [this.namespace, credentialId]);
          } catch (error) {
            client.release(error as Error);
            throw new CredentialsError(
              'store_failed',
              `cannot lock ${JSON.stringify(credentialId)} for refresh: ${(error as Error).message}`,
              {
                cause: error,
              },
            );
          }
          let released: () => void = () => undefined;
          const done = new Promise<void>((resolveDone) => (released = resolveDone));
          let once: Promise<void> | undefined;
          resolve(() => {
            once ??= this.unlock(client, credentialId).finally(released);
            return once;
          });
          await done;
        })
        .catch(reject);
    });
  }

  /** Ends the pool when the lock made it. Locks still held are released with their sessions. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
  }

  private async unlock(client: pg.PoolClient, credentialId: string): Promise<void> {
    try {
      await client.query(`SELECT pg_advisory_unlock(${KEY})`, [this.namespace, credentialId]);
      client.release();
    } catch (error) {
      // A broken session has lost the lock already; destroy the connection rather than reuse it.
      client.release(error as Error);
    }
  }
}
