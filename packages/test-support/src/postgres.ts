/**
 * @module postgres
 * A private PostgreSQL schema per test file. The connection string carries
 * `search_path`, so any client made from it works inside the schema, and
 * the schema is dropped when the file's tests end.
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { missing, type Requirement } from './requirement.js';

/** Where tests find PostgreSQL unless SWITCHYARD_TEST_PG_URL says otherwise. */
export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** A reachable PostgreSQL with a schema of the test file's own. */
export interface PostgresForTests {
  /** Server URL without the schema (for admin work). */
  serverUrl: string;
  /** URL whose sessions use `schema` by default. */
  url: string;
  /** Name of the file's schema. */
  schema: string;
}

function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}

/**
 * Gives the calling test file its own schema, or a skip message when
 * PostgreSQL is unreachable (an error under CI).
 *
 * @example
 * ```ts
 * const pg = await postgresForTests(import.meta.url);
 * test('stores rows', { skip: pg.skip }, async () => {
 *   if (!pg.available) return;
 *   const client = new Client({ connectionString: pg.url });
 * });
 * ```
 */
export async function postgresForTests(fileUrl: string, env: NodeJS.ProcessEnv = process.env): Promise<Requirement<PostgresForTests>> {
  const serverUrl = env.SWITCHYARD_TEST_PG_URL || DEFAULT_PG_URL;
  const tag = createHash('sha256').update(fileUrl).digest('hex').slice(0, 8);
  const schema = `t_${tag}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
    await admin.query(`CREATE SCHEMA "${schema}"`);
  } catch (error) {
    await admin.end().catch(() => undefined);
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return missing(
      `PostgreSQL is not reachable at ${redact(serverUrl)} (${reason})`,
      'Start PostgreSQL there, or point SWITCHYARD_TEST_PG_URL at a server where the user may create schemas, to run these tests.',
      env,
    );
  }
  await admin.end();
  // The schema goes when the test file's process is done, after every after() hook: the file's own hooks stop the
  // programs it started (gateway nodes) that still hold connections and locks in it. A root after() registered
  // here would run first (hooks run in the order they are added) and wait on those locks.
  process.once('beforeExit', () => void dropSchema(serverUrl, schema));
  return { available: true, skip: false, serverUrl, url: withSearchPath(serverUrl, schema), schema };
}

/** Drops a test schema; locks still held by a closing program are waited out briefly, then the schema is left. */
async function dropSchema(serverUrl: string, schema: string): Promise<void> {
  const cleanup = new pg.Client({ connectionString: serverUrl });
  try {
    await cleanup.connect();
    await cleanup.query("SET lock_timeout = '5s'");
    for (let attempt = 1; ; attempt++) {
      try {
        await cleanup.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        return;
      } catch (error) {
        const code = (error as { code?: string }).code;
        // A deadlock or lock timeout with a program still closing: try again a little later.
        if ((code !== '40P01' && code !== '55P03') || attempt === 3) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  } catch (error) {
    process.emitWarning(`test schema ${schema} was left behind: ${(error as Error).message}`);
  } finally {
    await cleanup.end().catch(() => undefined);
  }
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/**
 * Runs one statement on a connection of its own (to `url`, schema included),
 * for tests that set up or inspect tables, or kill a backend, beside the
 * code under test.
 *
 * @example
 * ```ts
 * await sqlOnce(pg.url, 'TRUNCATE switchyard_quota');
 * ```
 */
export async function sqlOnce(url: string, text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}
