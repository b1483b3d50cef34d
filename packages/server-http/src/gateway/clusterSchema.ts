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
 * - `switchyard_client_keys` (version 2): runtime client keys
 *   (`PostgresClientKeyStore`): the record as JSON (a secret's digest, never
 *   the secret), announced on `cluster.client_keys_channel` when it changes.
 *   `switchyard_client_key_budgets` counts each key's budget in its current
 *   period, and `switchyard_client_key_reservations` holds what requests in
 *   flight reserved of it: `switchyard_client_key_reserve(...)` locks the
 *   key's budget row, so admissions of one key queue one behind the other and
 *   the sum of open reservations is exact once the lock is held (the design
 *   of the credentials' quota reservations).
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
  {
    version: 2,
    name: 'runtime client keys, their budget use and reservations',
    statements: [
      `CREATE TABLE switchyard_client_keys (
        id TEXT PRIMARY KEY,
        secret_digest TEXT NOT NULL UNIQUE,
        record JSONB NOT NULL,
        last_used_at TIMESTAMPTZ,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      `CREATE TABLE switchyard_client_key_budgets (
        id TEXT PRIMARY KEY,
        period TEXT COLLATE "C" NOT NULL,
        used BIGINT NOT NULL)`,
      `CREATE TABLE switchyard_client_key_reservations (
        reservation TEXT PRIMARY KEY,
        id TEXT NOT NULL,
        units BIGINT NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL)`,
      'CREATE INDEX switchyard_client_key_reservations_by_id ON switchyard_client_key_reservations (id)',
      `CREATE FUNCTION switchyard_client_key_reserve(
        p_id TEXT, p_reservation TEXT, p_units BIGINT, p_limit BIGINT, p_period TEXT, p_ttl_ms BIGINT)
      RETURNS TABLE (admitted BOOLEAN, used BIGINT)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_used BIGINT;
        v_period TEXT;
        v_reserved BIGINT;
      BEGIN
        -- The budget row is the lock every admission of this key queues on.
        INSERT INTO switchyard_client_key_budgets (id, period, used) VALUES (p_id, p_period, 0) ON CONFLICT (id) DO NOTHING;
        SELECT b.used, b.period INTO v_used, v_period FROM switchyard_client_key_budgets b WHERE b.id = p_id FOR UPDATE;
        IF v_period < p_period COLLATE "C" THEN
          -- A new period starts over; what was reserved in the old one settles into nothing.
          UPDATE switchyard_client_key_budgets b SET period = p_period, used = 0 WHERE b.id = p_id;
          DELETE FROM switchyard_client_key_reservations r WHERE r.id = p_id;
          v_used := 0;
        ELSIF v_period > p_period COLLATE "C" THEN
          -- A node whose clock is behind: the period it asks for is over.
          RETURN QUERY SELECT false, v_used;
          RETURN;
        END IF;
        DELETE FROM switchyard_client_key_reservations r WHERE r.id = p_id AND r.expires_at <= clock_timestamp();
        SELECT COALESCE(sum(r.units), 0) INTO v_reserved FROM switchyard_client_key_reservations r WHERE r.id = p_id;
        IF v_used + v_reserved >= p_limit THEN
          RETURN QUERY SELECT false, v_used;
          RETURN;
        END IF;
        INSERT INTO switchyard_client_key_reservations (reservation, id, units, expires_at)
          VALUES (p_reservation, p_id, p_units, clock_timestamp() + p_ttl_ms * interval '1 millisecond');
        RETURN QUERY SELECT true, v_used;
      END
      $fn$`,
    ],
  },
];
