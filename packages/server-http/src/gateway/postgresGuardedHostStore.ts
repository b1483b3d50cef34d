/**
 * @module postgresGuardedHostStore
 * The cluster's `GuardedHostStore`: one row per host admitted through the
 * management API on any node, so that a node which re-reads its config after
 * another node's reload signal (or restarts) guards the same hosts.
 */
import { runMigrations } from '@switchyard/runtime/postgres';
import type pg from 'pg';
import { GATEWAY_MIGRATION_COMPONENT, GATEWAY_MIGRATIONS } from './clusterSchema.js';
import type { GuardedHostStore } from './guardedHostStore.js';

/**
 * Guarded hosts shared by every node on one PostgreSQL database. It has no
 * `forget`: a node whose config stops naming a host cannot know that no
 * other node's does, so a host stays recorded (and guarded wherever a config
 * names it) until the operator names it in `api-call-allow` or deletes its row.
 *
 * @example
 * ```ts
 * const store = await PostgresGuardedHostStore.open(pool, 'node-a');
 * await store.add(['models.example.com']);
 * ```
 */
export class PostgresGuardedHostStore implements GuardedHostStore {
  private constructor(
    private readonly pool: pg.Pool,
    private readonly nodeId: string,
  ) {}

  /** Applies the gateway's migrations on `pool` (which the store never ends). */
  static async open(pool: pg.Pool, nodeId: string): Promise<PostgresGuardedHostStore> {
    await runMigrations(pool, GATEWAY_MIGRATION_COMPONENT, GATEWAY_MIGRATIONS);
    return new PostgresGuardedHostStore(pool, nodeId);
  }

  async load(): Promise<readonly string[]> {
    const { rows } = await this.pool.query<{ host: string }>('SELECT host FROM switchyard_guarded_hosts');
    return rows.map((row) => row.host);
  }

  async add(hosts: readonly string[]): Promise<void> {
    if (hosts.length === 0) return;
    await this.pool.query(
      `INSERT INTO switchyard_guarded_hosts (host, admitted_by) SELECT unnest($1::text[]), $2 ON CONFLICT (host) DO NOTHING`,
      [hosts, this.nodeId],
    );
  }
}
