/**
 * Benchmark of the shared quota on PostgreSQL: what the deleted-credential guard costs.
 *
 * Every write of a quota row checks that its credential is not deleted, under a shared advisory lock that
 * the delete takes exclusively (a BEFORE INSERT trigger, migrations 4 and 6), so that a credential deleted
 * while a request is in flight leaves no quota row behind. This measures the two
 * writes a clustered request makes on a credential with a limit, with the guard and without it (the
 * same schema with the trigger disabled), in the same run, alternating in short rounds so both see the
 * same machine:
 *   - settle: `add` of one request's usage (what the quota flusher writes);
 *   - admit: `reserve` then the `add` that settles the reservation (exact quota across nodes).
 * Each at 8 writers in parallel, over 16 credentials (spread) and over 1 (every writer queues on one row).
 *
 *   pnpm bench quota-postgres [--smoke]
 *
 * PostgreSQL is found at SWITCHYARD_TEST_PG_URL or postgres://postgres@127.0.0.1:5432/test. Without one
 * the benchmark says how to enable it and exits 0, or fails under CI, as the tests do.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { generateEncryptionKey, parseCredential } from '@switchyard/credentials';
import { PostgresCredentialStore, PostgresQuotaStore } from '@switchyard/credentials/postgres';
import { DEFAULT_PG_URL, sqlOnce } from '@switchyard/test-support';
import { type Row, report, SMOKE } from './lib.js';

const serverUrl = process.env.SWITCHYARD_TEST_PG_URL || DEFAULT_PG_URL;
const WRITERS = 8;
const ROUNDS = SMOKE ? 2 : 10;
const ROUND_MS = SMOKE ? 150 : 1000;
const PERIOD = '2026-11-01T00:00:00.000Z';

try {
  await sqlOnce(serverUrl, 'SELECT 1');
} catch (error) {
  const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  const message = `quota-postgres: PostgreSQL is not reachable at ${serverUrl.replace(/:[^:@/]*@/, ':***@')} (${reason}). Start it there, or set SWITCHYARD_TEST_PG_URL, to run this benchmark.`;
  if (process.env.CI) {
    console.error(message);
    process.exit(1);
  }
  console.log(message);
  process.exit(0);
}

interface Layout {
  schema: string;
  credentials: PostgresCredentialStore;
  quotas: PostgresQuotaStore;
  ids: string[];
}

const tag = randomBytes(4).toString('hex');
// synchronous_commit=off: a commit's flush to disk costs the same with and without the guard and would
// otherwise be most of what is measured; without it the ratio is the statements' own.
const schemaUrl = (schema: string) => {
  const url = new URL(serverUrl);
  url.searchParams.set('options', `-c search_path=${schema} -c synchronous_commit=off`);
  return url.toString();
};

async function layout(name: string, guarded: boolean): Promise<Layout> {
  const schema = `bench_quota_${name}_${tag}`;
  await sqlOnce(serverUrl, `CREATE SCHEMA "${schema}"`);
  const url = schemaUrl(schema);
  const credentials = await PostgresCredentialStore.open({
    connection: url,
    max: 2,
    nodeId: 'bench',
    encryption: { key: generateEncryptionKey() },
    events: { channel: `bench_auth_${name}_${tag}` },
  });
  const quotas = await PostgresQuotaStore.open({ connection: url, max: WRITERS, listen: false });
  if (!guarded) await sqlOnce(url, 'ALTER TABLE switchyard_quota DISABLE TRIGGER switchyard_quota_of_live_credential');
  const now = new Date().toISOString();
  const ids = Array.from({ length: 16 }, (_, i) => `bench-${String(i).padStart(2, '0')}`);
  for (const id of ids) {
    await credentials.put(
      parseCredential({ id, provider: 'openai', type: 'api_key', token: `sk-bench-${id}`, created_at: now, updated_at: now, revision: 1 }),
    );
  }
  return { schema, credentials, quotas, ids };
}

type Workload = (store: PostgresQuotaStore, id: string) => Promise<void>;

const settle: Workload = async (store, id) => {
  await store.add([{ id, tokens: 22, period_start: PERIOD }]);
};
const admit: Workload = async (store, id) => {
  const reservation = randomUUID();
  const answer = await store.reserve({ id, reservation, tokens: 22, limit: Number.MAX_SAFE_INTEGER, period_start: PERIOD, ttlMs: 60_000 });
  if (!answer.admitted) throw new Error(`bench: ${id} was refused`);
  await store.add([{ id, tokens: 22, period_start: PERIOD, reservations: [reservation] }]);
};

/** Runs `workload` from WRITERS loops for `ms`, each on its own credential of `ids`; returns workloads per second. */
async function round(target: Layout, ids: readonly string[], workload: Workload, ms: number): Promise<number> {
  let done = 0;
  const stopAt = performance.now() + ms;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      const id = ids[writer % ids.length]!;
      while (performance.now() < stopAt) {
        await workload(target.quotas, id);
        done++;
      }
    }),
  );
  return (done / (performance.now() - start)) * 1000;
}

const guarded = await layout('guarded', true);
const unguarded = await layout('unguarded', false);
const rows: Row[] = [];
try {
  const cases: [string, Workload, (l: Layout) => string[]][] = [
    ['settle (add), 16 credentials', settle, (l) => l.ids],
    ['settle (add), 1 credential', settle, (l) => l.ids.slice(0, 1)],
    ['admit (reserve + add), 16 credentials', admit, (l) => l.ids],
    ['admit (reserve + add), 1 credential', admit, (l) => l.ids.slice(0, 1)],
  ];
  for (const [name, workload, ids] of cases) {
    // Warm both (connections, plans), then alternate so a busy moment hits both alike.
    await round(guarded, ids(guarded), workload, 100);
    await round(unguarded, ids(unguarded), workload, 100);
    const samples = { guarded: [] as number[], unguarded: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      const first = i % 2 === 0;
      if (first) samples.guarded.push(await round(guarded, ids(guarded), workload, ROUND_MS));
      samples.unguarded.push(await round(unguarded, ids(unguarded), workload, ROUND_MS));
      if (!first) samples.guarded.push(await round(guarded, ids(guarded), workload, ROUND_MS));
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const base = median(samples.unguarded);
    rows.push({ name: `${name}: without the guard`, value: base, unit: 'ops/s' });
    const value = median(samples.guarded);
    rows.push({ name: `${name}: with the guard`, value, unit: 'ops/s', baseline: base });
  }
} finally {
  for (const target of [guarded, unguarded]) {
    await target.quotas.close();
    await target.credentials.close();
    await sqlOnce(serverUrl, `DROP SCHEMA IF EXISTS "${target.schema}" CASCADE`);
  }
}

report(
  `shared quota on PostgreSQL: the deleted-credential guard (${WRITERS} writers, median of ${ROUNDS} rounds, commits not flushed)`,
  rows,
);
