/**
 * @module credentialRekey
 * Moves every row of `switchyard_credentials` to a new encryption key while
 * the gateway nodes keep running (see {@link rekeyCredentialRows}).
 *
 * - First every live row is opened with the keys at hand; if any cannot be,
 *   nothing is written and the error names those rows.
 * - Then rows move in batches, one transaction each, locked with
 *   `FOR UPDATE`: a node's write to a row (an OAuth refresh) either
 *   commits before the batch locks it, and the batch re-seals what that
 *   write stored, or waits for the batch and then stores its own content.
 *   A write is never overwritten with what the rekey read earlier. The
 *   first pass skips rows other transactions hold (`SKIP LOCKED`) so one
 *   slow writer does not stall a whole batch; a second pass waits for them.
 * - Only `secrets` changes: the sealed plaintext, the record and the
 *   revision stay as they were. Nodes cache decrypted credentials keyed by
 *   revision, never ciphertext, so there is nothing for them to re-read and
 *   no auth event is sent; a conditional write (`expectedRevision`) racing
 *   the rekey still succeeds.
 * - Rows already under the new key are not touched, so running it again
 *   after an interruption finishes the job.
 */
import type pg from 'pg';
import type { EncryptionKey } from '../encryption.js';
import { CredentialsError } from '../errors.js';
import { type CredentialRow, resealRow, rowKeyId } from './credentialRows.js';

/** Options of `PostgresCredentialStore.rekey`. */
export interface PostgresRekeyOptions {
  /** Rows per transaction (default 100): how long a node's write to one of them may wait. */
  batchSize?: number;
  /** Called after each committed batch (no lock is held); the next batch waits for a returned promise. */
  onProgress?: (progress: PostgresRekeyProgress) => void | Promise<void>;
}

/** Where a rekey is, after a committed batch. */
export interface PostgresRekeyProgress {
  /** Rows moved to the new key so far. */
  rekeyed: number;
  /** Rows that were under another key when the rekey started (rows nodes write meanwhile may add to it). */
  pending: number;
}

/** What `PostgresCredentialStore.rekey` did. */
export interface PostgresRekeyReport {
  /** Id of the key every credential row is now under. */
  key_id: string;
  /** Rows re-sealed under the new key. */
  rekeyed: number;
  /** Rows that were under the new key already (an interrupted run's, or written by nodes that use it). */
  already_current: number;
  /** Transactions committed. */
  batches: number;
}

const DEFAULT_BATCH_SIZE = 100;
/** Shown in messages: enough to find the rows, short enough to read. */
const NAMED_IN_MESSAGES = 10;

const SELECT_LIVE = 'SELECT id, provider, revision, record, secrets FROM switchyard_credentials WHERE NOT deleted ORDER BY id';
const SELECT_NOT_UNDER_KEY = `SELECT id FROM switchyard_credentials
  WHERE NOT deleted AND secrets->>'key_id' IS DISTINCT FROM $1 ORDER BY id`;
const lockBatch = (skipLocked: boolean) => `SELECT id, provider, revision, record, secrets FROM switchyard_credentials
  WHERE NOT deleted AND id > $1 AND secrets->>'key_id' IS DISTINCT FROM $2
  ORDER BY id LIMIT $3 FOR UPDATE${skipLocked ? ' SKIP LOCKED' : ''}`;
const WRITE_BATCH = `UPDATE switchyard_credentials AS c SET secrets = u.secrets
  FROM jsonb_each($1::jsonb) AS u(id, secrets) WHERE c.id = u.id`;

const named = (ids: readonly string[]) => ids.slice(0, NAMED_IN_MESSAGES).join(', ') + (ids.length > NAMED_IN_MESSAGES ? ', …' : '');

/**
 * Re-seals every live credential row under `key`, reading them with
 * `readKeys` (and `key` itself). See the module comment for the guarantees.
 */
export async function rekeyCredentialRows(
  pool: pg.Pool,
  readKeys: readonly EncryptionKey[],
  key: EncryptionKey,
  options: PostgresRekeyOptions = {},
): Promise<PostgresRekeyReport> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new CredentialsError('invalid_argument', 'batchSize must be a positive integer', { field: 'batchSize' });
  }
  const keys = [key, ...readKeys.filter((k) => k.id !== key.id)];
  const pending = await verifyReadable(pool, keys, key);
  let rekeyed = 0;
  let batches = 0;
  for (const skipLocked of [true, false]) {
    let afterId = '';
    for (;;) {
      const batch = await rekeyBatch(pool, keys, key, { afterId, batchSize, skipLocked });
      if (batch.lastId === undefined) break;
      afterId = batch.lastId;
      rekeyed += batch.rekeyed;
      batches++;
      await options.onProgress?.({ rekeyed, pending: Math.max(pending.count, rekeyed) });
    }
  }
  const left = (await query<{ id: string }>(pool, SELECT_NOT_UNDER_KEY, [key.id])).rows.map((row) => row.id);
  if (left.length > 0) {
    // Only a node that still seals with the old key can put rows back under it after both passes.
    throw new CredentialsError(
      'rekey_incomplete',
      `rekey moved ${rekeyed} row(s), but ${left.length} were written under another key meanwhile (${named(left)}): a node still has the old key as auth.encryption.key. Give every node the new key (old one in previous_keys) and run rekey again`,
    );
  }
  return { key_id: key.id, rekeyed, already_current: pending.alreadyCurrent, batches };
}

/** Opens every live row; refuses, naming them, when some cannot be opened. Counts the rows still to move. */
async function verifyReadable(
  pool: pg.Pool,
  keys: readonly EncryptionKey[],
  key: EncryptionKey,
): Promise<{ count: number; alreadyCurrent: number }> {
  const { rows } = await query<CredentialRow>(pool, SELECT_LIVE);
  const unreadable: string[] = [];
  let alreadyCurrent = 0;
  for (const row of rows) {
    try {
      resealRow(row, keys, key);
    } catch (error) {
      unreadable.push(`${row.id} (${(error as Error).message})`);
      continue;
    }
    if (rowKeyId(row) === key.id) alreadyCurrent++;
  }
  if (unreadable.length > 0) {
    throw new CredentialsError(
      'decryption_failed',
      `rekey stopped before writing anything: ${unreadable.length} credential row(s) cannot be decrypted with the configured keys: ${named(unreadable)}`,
    );
  }
  return { count: rows.length - alreadyCurrent, alreadyCurrent };
}

/** Locks, re-seals and writes the next rows after `afterId` in one transaction; `lastId` undefined when none are left. */
async function rekeyBatch(
  pool: pg.Pool,
  keys: readonly EncryptionKey[],
  key: EncryptionKey,
  at: { afterId: string; batchSize: number; skipLocked: boolean },
): Promise<{ lastId: string | undefined; rekeyed: number }> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new CredentialsError('store_failed', `rekey: ${(error as Error).message}`, { cause: error });
  }
  let broken = false;
  try {
    await client.query('BEGIN');
    // FOR UPDATE re-reads a row a concurrent write just committed, so what is re-sealed is always the latest content.
    const { rows } = await client.query<CredentialRow>(lockBatch(at.skipLocked), [at.afterId, key.id, at.batchSize]);
    const resealed: Record<string, unknown> = {};
    for (const row of rows) {
      try {
        resealed[row.id] = resealRow(row, keys, key);
      } catch (error) {
        throw new CredentialsError(
          'decryption_failed',
          `rekey stopped: credential row ${row.id}, written after the rekey began, cannot be decrypted with the configured keys (${(error as Error).message})`,
          { cause: error },
        );
      }
    }
    if (rows.length > 0) await client.query(WRITE_BATCH, [JSON.stringify(resealed)]);
    await client.query('COMMIT');
    return { lastId: rows.at(-1)?.id, rekeyed: rows.length };
  } catch (error) {
    // A connection whose rollback fails is in an unknown state: the pool gets a fresh one instead.
    await client.query('ROLLBACK').catch(() => (broken = true));
    if (error instanceof CredentialsError) throw error;
    throw new CredentialsError(
      'store_failed',
      `rekey: a batch after ${JSON.stringify(at.afterId)} failed and was rolled back (${(error as Error).message}); rows before it are under the new key: run rekey again to finish`,
      { cause: error },
    );
  } finally {
    client.release(broken);
  }
}

async function query<R extends pg.QueryResultRow>(pool: pg.Pool, sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
  try {
    return await pool.query<R>(sql, params);
  } catch (error) {
    throw new CredentialsError('store_failed', `rekey: ${(error as Error).message}`, { cause: error });
  }
}
