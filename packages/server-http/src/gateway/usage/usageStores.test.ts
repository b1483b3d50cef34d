/**
 * The gateway's durable usage stores run the `UsageStore` contract: SQLite
 * in a temporary directory, and PostgreSQL (two writers on one schema, as two
 * nodes) when it is reachable.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runUsageStoreContract, sampleRollup } from '@switchyard/observability/contract';
import { postgresForTests, sqlOnce } from '@switchyard/test-support';
import pg from 'pg';
import { PostgresUsageStore } from './postgresUsageStore.js';
import { SqliteUsageStore, UsageStoreUnavailableError } from './sqliteUsageStore.js';

const dir = mkdtempSync(join(tmpdir(), 'usage-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

runUsageStoreContract('sqlite', async () => {
  const path = join(dir, `usage-${files++}.sqlite`);
  return { store: SqliteUsageStore.open(path), reopen: async () => SqliteUsageStore.open(path) };
});

test('the SQLite file is owner-only, and a file of a newer schema is refused with its path', async () => {
  const path = join(dir, 'modes.sqlite');
  const store = SqliteUsageStore.open(path);
  await store.add([sampleRollup()]);
  await store.close();
  assert.equal(statSync(path).mode & 0o777, 0o600);
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(path);
  db.pragma('user_version = 99');
  db.close();
  assert.throws(
    () => SqliteUsageStore.open(path),
    (error: Error) => error instanceof UsageStoreUnavailableError && /schema 99/.test(error.message),
  );
});

const postgres = await postgresForTests(import.meta.url);
if (postgres.available) {
  const pools: pg.Pool[] = [];
  after(async () => {
    for (const pool of pools) await pool.end();
  });
  const pool = () => {
    const opened = new pg.Pool({ connectionString: postgres.url, max: 2 });
    pools.push(opened);
    return opened;
  };
  runUsageStoreContract('postgres', async () => {
    const store = await PostgresUsageStore.open(pool(), 'node-a');
    await sqlOnce(postgres.url, 'TRUNCATE switchyard_usage_minutes');
    return {
      store,
      reopen: () => PostgresUsageStore.open(pool(), 'node-a'),
      peer: () => PostgresUsageStore.open(pool(), 'node-b'),
    };
  });
  test('postgres: each node writes rows of its own id', async () => {
    const a = await PostgresUsageStore.open(pool(), 'node-a');
    const b = await PostgresUsageStore.open(pool(), 'node-b');
    await sqlOnce(postgres.url, 'TRUNCATE switchyard_usage_minutes');
    await a.add([sampleRollup({ requests: 2 })]);
    await b.add([sampleRollup({ requests: 3 })]);
    const { rows } = await sqlOnce(postgres.url, 'SELECT node_id, requests FROM switchyard_usage_minutes ORDER BY node_id');
    assert.deepEqual(
      rows.map((r) => [r.node_id, Number(r.requests)]),
      [
        ['node-a', 2],
        ['node-b', 3],
      ],
    );
  });
} else {
  test('postgres usage store', { skip: postgres.skip }, () => {});
}
