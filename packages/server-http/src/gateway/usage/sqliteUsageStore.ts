/**
 * @module sqliteUsageStore
 * One gateway's usage rollups in SQLite (`auth-dir/.usage.sqlite`), so they
 * survive a restart. A batch is one transaction of upserts that add to each
 * row; WAL journaling keeps a write from blocking a reader. better-sqlite3
 * is synchronous: a write runs on the event loop, which is why it happens
 * only once per flush interval, with every request of that interval in one
 * transaction, never per request.
 */
import { closeSync, openSync } from 'node:fs';
import type { UsageBucket, UsageRollup, UsageSeriesQuery, UsageStore } from '@switchyard/observability';
import Database from 'better-sqlite3';
import { type BucketRow, bucketsOf, GROUP_COLUMNS, seriesSelect } from './usageSql.js';

/** The schema version this code writes (`PRAGMA user_version`). */
const SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS usage_minutes (
  minute INTEGER NOT NULL,
  key_id TEXT NOT NULL,
  tenant TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  key_name TEXT NOT NULL,
  requests INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  cache_hits INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost REAL NOT NULL,
  PRIMARY KEY (minute, key_id, tenant, provider, model)
) WITHOUT ROWID;
`;

/** The SQLite store's file could not be opened or is of a newer schema. */
export class UsageStoreUnavailableError extends Error {
  override name = 'UsageStoreUnavailableError';
  readonly code = 'usage_store_unavailable';
}

/**
 * Usage rollups in one SQLite file.
 *
 * @example
 * ```ts
 * const store = SqliteUsageStore.open('auths/.usage.sqlite');
 * const recorder = new UsageRecorder({ store });
 * ```
 */
export class SqliteUsageStore implements UsageStore {
  private readonly upsert: Database.Statement;
  private readonly deleteBefore: Database.Statement;
  private readonly addAll: (rollups: readonly UsageRollup[]) => void;

  private constructor(private readonly db: Database.Database) {
    this.upsert = db.prepare(`
      INSERT INTO usage_minutes (minute, key_id, tenant, provider, model, key_name, requests, errors, cache_hits, input_tokens, output_tokens, cost)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (minute, key_id, tenant, provider, model) DO UPDATE SET
        key_name = excluded.key_name,
        requests = requests + excluded.requests,
        errors = errors + excluded.errors,
        cache_hits = cache_hits + excluded.cache_hits,
        input_tokens = input_tokens + excluded.input_tokens,
        output_tokens = output_tokens + excluded.output_tokens,
        cost = cost + excluded.cost`);
    this.deleteBefore = db.prepare('DELETE FROM usage_minutes WHERE minute < ?');
    // Positional parameters: binding an object looks each named parameter up by name, about a quarter of the CPU
    // of a 10,000-row batch (docs/benchmarks.md). The rows go in as they come: upserts apply one after another, so two
    // rows of one minute and dimensions in a batch add up (no merging pass needed, unlike PostgreSQL's
    // single statement).
    this.addAll = db.transaction((rollups: readonly UsageRollup[]) => {
      const { upsert } = this;
      for (const r of rollups) {
        upsert.run(
          r.minute,
          r.keyId,
          r.tenant,
          r.provider,
          r.model,
          r.keyName,
          r.requests,
          r.errors,
          r.cacheHits,
          r.inputTokens,
          r.outputTokens,
          r.cost,
        );
      }
    });
  }

  /** Opens (creating it 0600) the file at `path`. */
  static open(path: string): SqliteUsageStore {
    let db: Database.Database | undefined;
    try {
      // Created owner-only before SQLite opens it: the file names every client key and tenant. SQLite gives its
      // -wal and -shm files the database file's mode.
      closeSync(openSync(path, 'a', 0o600));
      db = new Database(path, { timeout: 5_000 });
      db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode: a power cut may lose the last commits, never corrupt the file; a lost commit is at most
      // one flush of usage, which a crash loses anyway.
      db.pragma('synchronous = NORMAL');
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION) {
        throw new Error(`the file has usage schema ${version}; this gateway knows up to ${SCHEMA_VERSION} (a newer version wrote it)`);
      }
      db.exec(SCHEMA);
      // The primary key leads with the minute, so range reads and pruning use it; a separate index on the minute
      // (earlier versions made one) only doubled the B-tree work of each upserted row.
      db.exec('DROP INDEX IF EXISTS usage_minutes_by_minute');
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
      return new SqliteUsageStore(db);
    } catch (error) {
      db?.close();
      throw new UsageStoreUnavailableError(`cannot open the usage database ${path}: ${(error as Error).message}`, { cause: error });
    }
  }

  async add(rollups: readonly UsageRollup[]): Promise<void> {
    if (rollups.length === 0) return;
    this.addAll(rollups);
  }

  async series(query: UsageSeriesQuery): Promise<UsageBucket[]> {
    const column = GROUP_COLUMNS[query.groupBy];
    const rows = this.db
      .prepare(
        `${seriesSelect(query.groupBy, '@from', '@step', (name) => `MAX(${name})`)}
         FROM usage_minutes WHERE minute >= @from AND minute < @to GROUP BY start, ${column}`,
      )
      .all({ from: query.from, to: query.to, step: query.stepMs }) as BucketRow[];
    return bucketsOf(rows);
  }

  async prune(before: number): Promise<number> {
    return this.deleteBefore.run(before).changes;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
