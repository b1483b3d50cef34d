/**
 * @module clusterSchema
 * The tables the gateway server itself keeps in the cluster's PostgreSQL
 * database, beside the credentials' (`@switchyard/credentials/postgres`) and
 * the cooldowns' (`@switchyard/core-routing/postgres`): versioned migrations
 * of the component `gateway`, recorded in `switchyard_gateway_migrations`
 * and applied by `GatewayCluster.open` (concurrent openers wait on one lock).
 *
 * - `switchyard_guarded_hosts` (version 1): the hosts the management API
 *   admitted on any node (`PostgresGuardedHostStore`), held to the SSRF guard
 *   at every connection on every node whose config names them. Rows are only
 *   added: no node can tell that every other node's config has let a host go.
 */
import type { Migration } from '@switchyard/runtime/postgres';

/** The migration component of the gateway server's tables. */
export const GATEWAY_MIGRATION_COMPONENT = 'gateway';

/** Migrations of the `gateway` component. Append-only: never edit a released one, add the next. */
export const GATEWAY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'hosts admitted through the management API, guarded on every node',
    statements: [
      `CREATE TABLE switchyard_guarded_hosts (
        host TEXT PRIMARY KEY,
        admitted_by TEXT NOT NULL,
        admitted_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    ],
  },
];
