/**
 * @module schema
 * The tables of the credentials package on PostgreSQL, as versioned
 * migrations (component `credentials`, recorded in
 * `switchyard_credentials_migrations`). Every PostgreSQL adapter of the
 * package applies them on open; concurrent openers wait on one lock.
 *
 * - `switchyard_credentials`: one row per credential id, kept after a
 *   delete as a tombstone (`deleted`), so revisions keep rising across a
 *   delete and re-create. `record` is the metadata; `secrets` the sealed
 *   token, refresh token and OAuth secrets.
 * - `switchyard_quota`: usage per credential and period. `period_start` is
 *   ISO 8601 text compared byte-wise (`COLLATE "C"`), which orders it as
 *   JavaScript string comparison does in `applyDelta`.
 * - `switchyard_quota_reservations`: requests admitted against a
 *   credential's quota and not yet settled (`PostgresQuotaStore.reserve`),
 *   each with an expiry so a dead node's reservations lapse.
 *   `switchyard_quota_reserve(...)` admits one: it locks the credential's
 *   quota row, so admissions of one credential queue one behind the other,
 *   and each statement of a PL/pgSQL function reads the rows committed
 *   before it: the sum of open reservations is exact once the lock is held.
 * - Quota rows follow their credential (version 4): no quota row is written
 *   for a credential `switchyard_credentials` holds as deleted, and the
 *   delete removes its quota row and reservations in its own transaction,
 *   so a write racing a delete cannot leave a row behind. Since version 6
 *   the two meet on an advisory lock per credential id, not on the
 *   credential row's own lock.
 * - `switchyard_sign_ins` (version 5): the public status of every device sign-in a
 *   node runs (`PostgresSignInDirectory`): `status` is the session as the
 *   page sees it (never the device code or a token), `node_id` its owner,
 *   `cancel_requested` set by another node's cancel, `forget_at` when the
 *   row stops being shown and may be pruned.
 */
import type { Migration } from '@switchyard/runtime/postgres';

/**
 * First key of the two-integer advisory lock that orders quota writes against a credential's delete
 * (version 6); the second is a hash of the schema and the credential id. ASCII "SYQG".
 */
const QUOTA_GUARD_CLASS = 0x53595147;

/** Migrations of the `credentials` component. Append-only. */
export const CREDENTIALS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'credentials with tombstones, and quota usage',
    statements: [
      `CREATE TABLE switchyard_credentials (
        id TEXT PRIMARY KEY,
        provider TEXT NOT NULL,
        revision BIGINT NOT NULL,
        deleted BOOLEAN NOT NULL DEFAULT false,
        created_revision BIGINT NOT NULL,
        record JSONB,
        secrets JSONB,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      `CREATE TABLE switchyard_quota (
        id TEXT PRIMARY KEY,
        used BIGINT NOT NULL,
        period_start TEXT COLLATE "C",
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    ],
  },
  {
    version: 2,
    name: 'quota reservations: admission against a shared limit',
    statements: [
      `CREATE TABLE switchyard_quota_reservations (
        reservation TEXT PRIMARY KEY,
        id TEXT NOT NULL,
        tokens BIGINT NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL)`,
      'CREATE INDEX switchyard_quota_reservations_by_id ON switchyard_quota_reservations (id)',
      `CREATE FUNCTION switchyard_quota_reserve(
        p_id TEXT, p_reservation TEXT, p_tokens BIGINT, p_limit BIGINT, p_period TEXT, p_ttl_ms BIGINT)
      RETURNS TABLE (admitted BOOLEAN, used BIGINT, reserved BIGINT)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_used BIGINT;
        v_period TEXT;
        v_reserved BIGINT;
      BEGIN
        -- The quota row is the lock every admission of this credential queues on.
        INSERT INTO switchyard_quota (id, used, period_start) VALUES (p_id, 0, p_period) ON CONFLICT (id) DO NOTHING;
        SELECT q.used, q.period_start INTO v_used, v_period FROM switchyard_quota q WHERE q.id = p_id FOR UPDATE;
        -- Use from an earlier period does not count in this one (the next add starts the period over).
        IF p_period IS NOT NULL AND (v_period IS NULL OR v_period < p_period COLLATE "C") THEN
          v_used := 0;
        END IF;
        DELETE FROM switchyard_quota_reservations r WHERE r.id = p_id AND r.expires_at <= clock_timestamp();
        SELECT COALESCE(sum(r.tokens), 0) INTO v_reserved FROM switchyard_quota_reservations r WHERE r.id = p_id;
        IF v_used + v_reserved >= p_limit THEN
          RETURN QUERY SELECT false, v_used, v_reserved;
          RETURN;
        END IF;
        INSERT INTO switchyard_quota_reservations (reservation, id, tokens, expires_at)
          VALUES (p_reservation, p_id, p_tokens, clock_timestamp() + p_ttl_ms * interval '1 millisecond');
        RETURN QUERY SELECT true, v_used, v_reserved + p_tokens;
      END
      $fn$`,
    ],
  },
  {
    version: 3,
    name: 'quota reservations: the answer names the period its use is of',
    statements: [
      // The return type changes, which CREATE OR REPLACE cannot do. Callers select columns by name, so a node
      // still on version 2's code reads this function's answer as before.
      'DROP FUNCTION switchyard_quota_reserve(TEXT, TEXT, BIGINT, BIGINT, TEXT, BIGINT)',
      `CREATE FUNCTION switchyard_quota_reserve(
        p_id TEXT, p_reservation TEXT, p_tokens BIGINT, p_limit BIGINT, p_period TEXT, p_ttl_ms BIGINT)
      RETURNS TABLE (admitted BOOLEAN, used BIGINT, reserved BIGINT, period_start TEXT)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_used BIGINT;
        v_period TEXT;
        v_reserved BIGINT;
      BEGIN
        -- The quota row is the lock every admission of this credential queues on.
        INSERT INTO switchyard_quota AS q (id, used, period_start) VALUES (p_id, 0, p_period) ON CONFLICT (id) DO NOTHING;
        SELECT q.used, q.period_start INTO v_used, v_period FROM switchyard_quota q WHERE q.id = p_id FOR UPDATE;
        -- Use from an earlier period does not count in this one (the next add starts the period over).
        IF p_period IS NOT NULL AND (v_period IS NULL OR v_period < p_period COLLATE "C") THEN
          v_used := 0;
          v_period := p_period;
        END IF;
        DELETE FROM switchyard_quota_reservations r WHERE r.id = p_id AND r.expires_at <= clock_timestamp();
        SELECT COALESCE(sum(r.tokens), 0) INTO v_reserved FROM switchyard_quota_reservations r WHERE r.id = p_id;
        IF v_used + v_reserved >= p_limit THEN
          RETURN QUERY SELECT false, v_used, v_reserved, v_period;
          RETURN;
        END IF;
        INSERT INTO switchyard_quota_reservations (reservation, id, tokens, expires_at)
          VALUES (p_reservation, p_id, p_tokens, clock_timestamp() + p_ttl_ms * interval '1 millisecond');
        RETURN QUERY SELECT true, v_used, v_reserved + p_tokens, v_period;
      END
      $fn$`,
    ],
  },
  {
    version: 4,
    name: 'quota rows follow their credential: none for a deleted one',
    statements: [
      // Every write of a quota row (an add, a set, an admission's first row) reads its credential's row FOR SHARE:
      // a delete in progress is waited for and its outcome read, and a delete that comes later waits for the
      // write and then removes its row. A credential this database does not hold (credentials kept in files)
      // puts no condition on its quota.
      `CREATE FUNCTION switchyard_quota_of_live_credential() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        v_deleted BOOLEAN;
      BEGIN
        SELECT c.deleted INTO v_deleted FROM switchyard_credentials c WHERE c.id = NEW.id FOR SHARE;
        IF v_deleted THEN
          RETURN NULL;
        END IF;
        RETURN NEW;
      END
      $fn$`,
      `CREATE TRIGGER switchyard_quota_of_live_credential BEFORE INSERT ON switchyard_quota
        FOR EACH ROW EXECUTE FUNCTION switchyard_quota_of_live_credential()`,
      `CREATE FUNCTION switchyard_quota_forget_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        DELETE FROM switchyard_quota WHERE id = NEW.id;
        -- SKIP LOCKED: a reservation locked by another transaction is being let go by an add, which waits on this
        -- credential's row; waiting for it in turn would deadlock.
        DELETE FROM switchyard_quota_reservations WHERE reservation IN (
          SELECT r.reservation FROM switchyard_quota_reservations r WHERE r.id = NEW.id FOR UPDATE SKIP LOCKED);
        RETURN NULL;
      END
      $fn$`,
      `CREATE TRIGGER switchyard_credentials_forget_quota AFTER UPDATE OF deleted ON switchyard_credentials
        FOR EACH ROW WHEN (NEW.deleted AND NOT OLD.deleted) EXECUTE FUNCTION switchyard_quota_forget_deleted()`,
      // Rows left by deletes that raced writes before this migration.
      'DELETE FROM switchyard_quota q USING switchyard_credentials c WHERE c.id = q.id AND c.deleted',
      'DELETE FROM switchyard_quota_reservations r USING switchyard_credentials c WHERE c.id = r.id AND c.deleted',
      // As version 3, except that a credential whose quota row cannot be made (it was deleted) is refused.
      `CREATE OR REPLACE FUNCTION switchyard_quota_reserve(
        p_id TEXT, p_reservation TEXT, p_tokens BIGINT, p_limit BIGINT, p_period TEXT, p_ttl_ms BIGINT)
      RETURNS TABLE (admitted BOOLEAN, used BIGINT, reserved BIGINT, period_start TEXT)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_used BIGINT;
        v_period TEXT;
        v_reserved BIGINT;
      BEGIN
        -- The quota row is the lock every admission of this credential queues on.
        INSERT INTO switchyard_quota AS q (id, used, period_start) VALUES (p_id, 0, p_period) ON CONFLICT (id) DO NOTHING;
        SELECT q.used, q.period_start INTO v_used, v_period FROM switchyard_quota q WHERE q.id = p_id FOR UPDATE;
        IF NOT FOUND THEN
          RETURN QUERY SELECT false, 0::BIGINT, 0::BIGINT, p_period;
          RETURN;
        END IF;
        -- Use from an earlier period does not count in this one (the next add starts the period over).
        IF p_period IS NOT NULL AND (v_period IS NULL OR v_period < p_period COLLATE "C") THEN
          v_used := 0;
          v_period := p_period;
        END IF;
        DELETE FROM switchyard_quota_reservations r WHERE r.id = p_id AND r.expires_at <= clock_timestamp();
        SELECT COALESCE(sum(r.tokens), 0) INTO v_reserved FROM switchyard_quota_reservations r WHERE r.id = p_id;
        IF v_used + v_reserved >= p_limit THEN
          RETURN QUERY SELECT false, v_used, v_reserved, v_period;
          RETURN;
        END IF;
        INSERT INTO switchyard_quota_reservations (reservation, id, tokens, expires_at)
          VALUES (p_reservation, p_id, p_tokens, clock_timestamp() + p_ttl_ms * interval '1 millisecond');
        RETURN QUERY SELECT true, v_used, v_reserved + p_tokens, v_period;
      END
      $fn$`,
    ],
  },
  {
    version: 5,
    name: 'sign-in status directory: device sign-ins visible and cancellable from every node',
    statements: [
      `CREATE TABLE switchyard_sign_ins (
        id TEXT PRIMARY KEY,
        node_id TEXT NOT NULL,
        state TEXT NOT NULL,
        status JSONB NOT NULL,
        cancel_requested BOOLEAN NOT NULL DEFAULT false,
        forget_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      // A restarting node looks up its own pending rows; pruning looks up the lapsed ones.
      "CREATE INDEX switchyard_sign_ins_pending_by_node ON switchyard_sign_ins (node_id) WHERE state = 'pending'",
      'CREATE INDEX switchyard_sign_ins_by_forget_at ON switchyard_sign_ins (forget_at)',
    ],
  },
  {
    version: 6,
    name: "quota rows follow their credential through an advisory lock, not the credential row's lock",
    statements: [
      // Version 4's guard read the credential row FOR SHARE on every quota write: a tuple lock, so each write
      // stamped the credential row (a MultiXact when writers overlapped) and queued behind any update of it (a
      // token refresh, a rekey batch). Here a quota write holds a shared transaction-scoped advisory lock on the
      // credential's id and reads `deleted` unlocked; the delete takes the same lock exclusively before it
      // removes rows. So a delete waits for the writes already past their check and then removes what they
      // wrote, and a write that comes after it waits for the delete's commit and then reads `deleted` as true.
      // The two-integer key space does not overlap the one-integer keys of the refresh lock and migrations.
      `CREATE OR REPLACE FUNCTION switchyard_quota_of_live_credential() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        v_deleted BOOLEAN;
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(${QUOTA_GUARD_CLASS}, hashtext(current_schema() || ':' || NEW.id));
        -- A statement of its own, so its snapshot is taken after the lock: a delete that held it has committed.
        SELECT c.deleted INTO v_deleted FROM switchyard_credentials c WHERE c.id = NEW.id;
        IF v_deleted THEN
          RETURN NULL;
        END IF;
        RETURN NEW;
      END
      $fn$`,
      `CREATE OR REPLACE FUNCTION switchyard_quota_forget_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM pg_advisory_xact_lock(${QUOTA_GUARD_CLASS}, hashtext(current_schema() || ':' || NEW.id));
        DELETE FROM switchyard_quota WHERE id = NEW.id;
        -- SKIP LOCKED: an add lets its reservations go before its quota write takes the lock this delete holds;
        -- waiting for those rows in turn would deadlock. That add then writes no quota, and its release commits.
        DELETE FROM switchyard_quota_reservations WHERE reservation IN (
          SELECT r.reservation FROM switchyard_quota_reservations r WHERE r.id = NEW.id FOR UPDATE SKIP LOCKED);
        RETURN NULL;
      END
      $fn$`,
    ],
  },
];
