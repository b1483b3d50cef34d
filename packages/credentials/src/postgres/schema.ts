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
 */
import type { Migration } from '@switchyard/core-routing/postgres';

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
];
