import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { eventually, postgresForTests, sqlOnce } from '@switchyard/test-support';
import pg from 'pg';
import { QuotaTracker } from '../pool/quotaTracker.js';
import { PostgresQuotaStore } from './postgresQuotaStore.js';

const postgres = await postgresForTests(import.meta.url);

if (!postgres.available) {
  test('PostgresQuotaStore reservations', { skip: postgres.skip }, () => {});
} else {
  const { url } = postgres;
  const channel = `t_reserve_${randomBytes(4).toString('hex')}`;
  const open = () => PostgresQuotaStore.open({ connection: url, max: 4, channel, listen: false });
  const period = '2026-07-01T00:00:00.000Z';
  const held = async (id: string) =>
    Number((await sqlOnce(url, 'SELECT COALESCE(sum(tokens), 0) AS s FROM switchyard_quota_reservations WHERE id = $1', [id])).rows[0].s);
  const reserve = (
    store: PostgresQuotaStore,
    id: string,
    tokens: number,
    limit: number,
    ttlMs = 60_000,
    periodStart: string | null = period,
  ) => {
    const reservation = randomUUID();
    return store
      .reserve({ id, reservation, tokens, limit, period_start: periodStart, ttlMs })
      .then((answer) => ({ ...answer, reservation }));
  };

  test('three handles reserving 300 times at once admit exactly as many as the limit has room for', async () => {
    const handles = await Promise.all([open(), open(), open()]);
    try {
      const id = `r-${randomUUID()}`;
      const answers = await Promise.all(handles.flatMap((store) => Array.from({ length: 100 }, () => reserve(store, id, 10, 1000))));
      const admitted = answers.filter((a) => a.admitted);
      assert.equal(admitted.length, 100, 'each admission saw every reservation before it: 100 × 10 tokens fill the limit of 1000');
      assert.equal(await held(id), 1000);
      // Every refusal saw the limit reached; every admission saw room for itself.
      for (const answer of answers) {
        if (answer.admitted) assert.ok(answer.reserved <= 1000 && answer.used === 0);
        else assert.equal(answer.used + answer.reserved, 1000);
      }
    } finally {
      await Promise.all(handles.map((h) => h.close()));
    }
  });

  test('an add lets its reservations go in the same write, so room comes back only as use is counted', async () => {
    const store = await open();
    try {
      const id = `r-${randomUUID()}`;
      const first = await Promise.all(Array.from({ length: 10 }, () => reserve(store, id, 10, 100)));
      assert.ok(first.every((a) => a.admitted));
      assert.equal((await reserve(store, id, 10, 100)).admitted, false);
      // Five settle with the 10 tokens they held; five use 4 each. 50 + 20 = 70 used, nothing held.
      await store.add([{ id, tokens: 50, period_start: period, reservations: first.slice(0, 5).map((a) => a.reservation) }]);
      assert.equal(await held(id), 50);
      assert.equal((await reserve(store, id, 10, 100)).admitted, false, '50 used and 50 held: no room');
      await store.add([{ id, tokens: 20, period_start: period, reservations: first.slice(5).map((a) => a.reservation) }]);
      assert.equal(await held(id), 0);
      const more = [];
      for (let answer = await reserve(store, id, 10, 100); answer.admitted; answer = await reserve(store, id, 10, 100)) more.push(answer);
      assert.equal(more.length, 3, 'room for 30 of 10-token requests: 70, 80 and 90 are below the limit of 100');
      // A release without tokens (the request failed) gives the room back.
      await store.add([{ id, tokens: 0, period_start: period, reservations: [more[0]!.reservation] }]);
      assert.equal((await reserve(store, id, 10, 100)).admitted, true);
      assert.deepEqual((await store.load()).get(id), { used: 70, period_start: period });
    } finally {
      await store.close();
    }
  });

  test('a reservation nobody settles lapses after its ttl (its node died mid-request)', async () => {
    const store = await open();
    try {
      const id = `r-${randomUUID()}`;
      const before = Date.now();
      const doomed = await reserve(store, id, 90, 100, 30_000);
      assert.equal(doomed.admitted, true);
      assert.equal((await reserve(store, id, 10, 100)).admitted, true);
      assert.equal((await reserve(store, id, 10, 100)).admitted, false, '90 + 10 held: the limit is reached');
      // The expiry is the ttl from the database's clock (same host, so within a second of ours)...
      const { rows } = await sqlOnce(url, 'SELECT expires_at FROM switchyard_quota_reservations WHERE reservation = $1', [
        doomed.reservation,
      ]);
      const expiresAt = (rows[0].expires_at as Date).getTime();
      assert.ok(Math.abs(expiresAt - (before + 30_000)) < 1000 + (Date.now() - before), `expires ${expiresAt - before} ms after`);
      // ...and once it has passed (moved back rather than waited for: a timed wait races a loaded machine), it lapses.
      await sqlOnce(url, "UPDATE switchyard_quota_reservations SET expires_at = now() - interval '1 second' WHERE reservation = $1", [
        doomed.reservation,
      ]);
      const after = await reserve(store, id, 10, 100);
      assert.equal(after.admitted, true);
      assert.equal(after.reserved, 20, 'the lapsed 90 are gone; 10 + 10 are held');
    } finally {
      await store.close();
    }
  });

  test("use from an earlier period does not count against a reservation in a new one, and remove() lets a credential's reservations go", async () => {
    const store = await open();
    try {
      const id = `r-${randomUUID()}`;
      await store.add([{ id, tokens: 100, period_start: '2026-06-01T00:00:00.000Z' }]);
      assert.equal((await reserve(store, id, 10, 100, 60_000, '2026-06-01T00:00:00.000Z')).admitted, false);
      const fresh = await reserve(store, id, 10, 100);
      assert.deepEqual([fresh.admitted, fresh.used, fresh.period_start], [true, 0, period]);
      // Once the row has moved on to July, a node whose clock is still in June hears whose use it is.
      await store.add([{ id, tokens: 5, period_start: period, reservations: [fresh.reservation] }]);
      const behind = await reserve(store, id, 10, 100, 60_000, '2026-06-01T00:00:00.000Z');
      assert.deepEqual([behind.used, behind.period_start], [5, period]);
      assert.equal((await reserve(store, id, 10, 100, 60_000, '2026-06-01T00:00:00.000Z')).period_start, period);
      await store.remove(id);
      assert.equal(await held(id), 0);
      assert.equal((await store.load()).has(id), false);
    } finally {
      await store.close();
    }
  });

  test('abandon empties a reservation at once, and one abandoned before it arrives is refused (its answer was lost)', async () => {
    const store = await open();
    try {
      const id = `r-${randomUUID()}`;
      const request = (tokens: number) => ({ id, reservation: randomUUID(), tokens, limit: 100, period_start: period, ttlMs: 60_000 });
      const lost = request(100);
      assert.equal((await store.reserve(lost)).admitted, true);
      assert.equal((await reserve(store, id, 10, 100)).admitted, false, 'the lost admission holds the whole limit');
      await store.abandon([lost, lost]);
      assert.equal(await held(id), 0);
      assert.equal((await reserve(store, id, 10, 100)).admitted, true, 'the room is back at once, not after the ttl');
      // A reserve still on its way when it is abandoned (it waited on the credential's row while its client gave up)
      // meets the abandoned id and rolls back whole.
      const late = request(80);
      await store.abandon([late]);
      await assert.rejects(store.reserve(late), { code: 'store_failed' });
      assert.equal(await held(id), 10);
      await store.abandon([late, request(5)]);
      await store.abandon([]);
      assert.equal(await held(id), 10, 'abandoning again, or what was never reserved, holds nothing');
    } finally {
      await store.close();
    }
  });

  test('bad reservations are refused before anything is written', async () => {
    const store = await open();
    try {
      const id = `r-${randomUUID()}`;
      const base = { id, reservation: randomUUID(), period_start: period, ttlMs: 1000 };
      await assert.rejects(store.reserve({ ...base, tokens: -1, limit: 10 }), { code: 'invalid_argument' });
      await assert.rejects(store.reserve({ ...base, tokens: 1, limit: 1.5 }), { code: 'invalid_argument' });
      await assert.rejects(store.reserve({ ...base, id: 'x'.repeat(7001), tokens: 1, limit: 10 }), { code: 'invalid_argument' });
      assert.equal(await held(id), 0);
    } finally {
      await store.close();
    }
  });

  /** A tracker on `store` counting one credential with a limit of 100 tokens a day. */
  const trackerOn = (store: PostgresQuotaStore, id: string) => {
    const tracker = new QuotaTracker({ store, scheduleOf: () => 'daily' });
    tracker.track(id, 'openai', 100);
    tracker.start();
    return tracker;
  };

  /** A pool whose `reserve` statements answer as `answer` says, given the real statement's result (still running). */
  const poolAnswering = (applicationName: string, answer: (result: Promise<pg.QueryResult>) => Promise<pg.QueryResult>) => {
    const pool = new pg.Pool({ connectionString: url, max: 4, application_name: applicationName });
    const query = pool.query.bind(pool) as (text: string, params?: unknown[]) => Promise<pg.QueryResult>;
    pool.query = ((text: string, params?: unknown[]) => {
      const result = query(text, params);
      return text.includes('switchyard_quota_reserve(') ? answer(result) : result;
    }) as typeof pool.query;
    return pool;
  };

  test('the reservation commits and its answer is lost: the request goes ahead, and the room is let go at once', async () => {
    // As a connection that drops after the commit: the statement's work is done, its answer never arrives.
    const pool = poolAnswering('switchyard-lost', async (result) => {
      await result;
      throw new Error('Connection terminated unexpectedly');
    });
    const store = await PostgresQuotaStore.open({ pool, channel, listen: false });
    const id = `lost-${randomUUID()}`;
    const tracker = trackerOn(store, id);
    try {
      const failed: unknown[] = [];
      tracker.events.on('quota:reserve_failed', ({ error }) => failed.push(error));
      assert.deepEqual(await tracker.admit(id, 60), { admitted: true }, 'the request goes ahead without a reservation');
      assert.equal(failed.length, 1);
      await eventually('the lost reservation is let go', async () => (await held(id)) === 0, 3000);
      assert.equal(store.admissions.failed, 1);
    } finally {
      await tracker.stop();
      await store.close();
      await pool.end();
    }
  });

  test('the reservation commits after its client gave up: the abandoned id refuses it, so it holds nothing', async () => {
    const id = `late-${randomUUID()}`;
    const applicationName = `switchyard-late-${randomBytes(4).toString('hex')}`;
    // The client gives up (as pg's query_timeout does) while the statement still runs in the database.
    let late: Promise<pg.QueryResult> | undefined;
    let giveUp: (() => void) | undefined;
    const pool = poolAnswering(applicationName, (result) => {
      late = result;
      return new Promise((_, reject) => {
        giveUp = () => reject(new Error('Query read timeout'));
      });
    });
    const store = await PostgresQuotaStore.open({ pool, channel, listen: false });
    const tracker = trackerOn(store, id);
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await store.add([{ id, tokens: 0, period_start: tracker.snapshot(id).period_start }]);
      // Another transaction holds the credential's quota row, so the admission queues behind it.
      await blocker.query('BEGIN');
      await blocker.query('SELECT used FROM switchyard_quota WHERE id = $1 FOR UPDATE', [id]);
      const admission = tracker.admit(id, 60)!;
      const waitingOnTheRow = `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE application_name = $1 AND wait_event_type = 'Lock' AND query LIKE '%switchyard_quota_reserve(%'`;
      await eventually(
        'the admission waits on the credential row',
        async () => (await sqlOnce(url, waitingOnTheRow, [applicationName])).rows[0].n === 1,
      );
      giveUp!();
      assert.deepEqual(await admission, { admitted: true }, 'the request goes ahead without a reservation');
      await tracker.flush();
      // Watched before the row is let go: its 23505 may arrive before COMMIT's answer does, and a
      // rejection nobody is waiting on yet would fail the file as unhandled.
      const rolledBack = assert.rejects(late!, { code: '23505' }, 'the late reservation meets the abandoned id and rolls back');
      await blocker.query('COMMIT');
      await rolledBack;
      assert.equal(await held(id), 0, 'the admission that ran on after its client gave up holds no room');
    } finally {
      await blocker.end();
      await tracker.stop();
      await store.close();
      await pool.end();
    }
  });
}
