/**
 * @module postgresUsageStore
 * A cluster's usage rollups in PostgreSQL. Each node upserts only rows keyed
 * by its own node id, adding its deltas to them (`requests = requests +
 * excluded.requests`), and a read sums every node's rows.
 *
 * Why both: rows keyed by node mean no two nodes ever update the same row,
 * so a busy minute of one key on N nodes is N uncontended rows rather than
 * one row every node's flush waits on; increments (rather than each node
 * writing its absolute totals) mean a node needs no read-back after a
 * restart, and a batch is one statement whatever came before it. Two nodes
 * that were given one node id by mistake still add up correctly.
 */
import type { UsageBucket, UsageRollup, UsageSeriesQuery, UsageStore } from '@switchyard/observability';
import { runMigrations } from '@switchyard/runtime/postgres';
import type pg from 'pg';
import { USAGE_MIGRATION_COMPONENT, USAGE_MIGRATIONS } from './usageSchema.js';
import { type BucketRow, bucketsOf, GROUP_COLUMNS, mergeRollups, seriesSelect } from './usageSql.js';

/**
 * Usage rollups of every node on one PostgreSQL database.
 *
 * @example
 * ```ts
 * const store = await PostgresUsageStore.open(pool, 'node-a');
 * const recorder = new UsageRecorder({ store });
 * ```
 */
export class PostgresUsageStore implements UsageStore {
  private constructor(
    private readonly pool: pg.Pool,
    private readonly nodeId: string,
  ) {}

  /** Applies the usage migrations on `pool` (which the store never ends). */
  static async open(pool: pg.Pool, nodeId: string): Promise<PostgresUsageStore> {
    await runMigrations(pool, USAGE_MIGRATION_COMPONENT, USAGE_MIGRATIONS);
    return new PostgresUsageStore(pool, nodeId);
  }

  async add(rollups: readonly UsageRollup[]): Promise<void> {
    if (rollups.length === 0) return;
    const rows = mergeRollups(rollups);
    const column = <K extends keyof UsageRollup>(key: K) => rows.map((row) => row[key]);
    // One statement for the batch: atomic, and one round trip however many rows.
    await this.pool.query(
      `INSERT INTO switchyard_usage_minutes AS t
         (node_id, minute, key_id, tenant, provider, model, key_name, requests, errors, cache_hits, input_tokens, output_tokens, cost)
       SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
         $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::double precision[])
       ON CONFLICT (node_id, minute, key_id, tenant, provider, model) DO UPDATE SET
         key_name = EXCLUDED.key_name,
         requests = t.requests + EXCLUDED.requests,
         errors = t.errors + EXCLUDED.errors,
         cache_hits = t.cache_hits + EXCLUDED.cache_hits,
         input_tokens = t.input_tokens + EXCLUDED.input_tokens,
         output_tokens = t.output_tokens + EXCLUDED.output_tokens,
         cost = t.cost + EXCLUDED.cost`,
      [
        this.nodeId,
        column('minute'),
        column('keyId'),
        column('tenant'),
        column('provider'),
        column('model'),
        column('keyName'),
        column('requests'),
        column('errors'),
        column('cacheHits'),
        column('inputTokens'),
        column('outputTokens'),
        column('cost'),
      ],
    );
  }

  async series(query: UsageSeriesQuery): Promise<UsageBucket[]> {
    const column = GROUP_COLUMNS[query.groupBy];
    // COLLATE "C": the greatest key name by code point, as the other stores pick it, whatever the database's locale.
    const { rows } = await this.pool.query<BucketRow>(
      `${seriesSelect(query.groupBy, '$1::bigint', '$3::bigint', (name) => `MAX(${name} COLLATE "C")`)}
       FROM switchyard_usage_minutes WHERE minute >= $1 AND minute < $2 GROUP BY start, ${column}`,
      [query.from, query.to, query.stepMs],
    );
    return bucketsOf(rows);
  }

  async prune(before: number): Promise<number> {
    const result = await this.pool.query('DELETE FROM switchyard_usage_minutes WHERE minute < $1', [before]);
    return result.rowCount ?? 0;
  }

  /** The pool is the cluster's: closing the store leaves it open. */
  async close(): Promise<void> {}
}
