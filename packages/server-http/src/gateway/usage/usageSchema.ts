/**
 * @module usageSchema
 * The usage table in the cluster's PostgreSQL database: versioned migrations
 * of their own component, `usage` (recorded in `switchyard_usage_migrations`),
 * apart from the gateway's other tables so that each feature's schema moves
 * on its own.
 *
 * - `switchyard_usage_minutes` (version 1): one row per node, minute, client
 *   key, tenant, provider and model, with its counters. A node only ever
 *   writes its own rows; readers sum over `node_id`. Indexed by minute for
 *   range reads and retention deletes.
 */
import type { Migration } from '@switchyard/runtime/postgres';

/** The migration component of the usage table. */
export const USAGE_MIGRATION_COMPONENT = 'usage';

/** Migrations of the `usage` component. Append-only: never edit a released one, add the next. */
export const USAGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'per-minute usage rollups, one row per node',
    statements: [
      `CREATE TABLE switchyard_usage_minutes (
        node_id TEXT NOT NULL,
        minute BIGINT NOT NULL,
        key_id TEXT NOT NULL,
        tenant TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        key_name TEXT NOT NULL,
        requests BIGINT NOT NULL,
        errors BIGINT NOT NULL,
        cache_hits BIGINT NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        cost DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (node_id, minute, key_id, tenant, provider, model))`,
      'CREATE INDEX switchyard_usage_minutes_by_minute ON switchyard_usage_minutes (minute)',
    ],
  },
];
