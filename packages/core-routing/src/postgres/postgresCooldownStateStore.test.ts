import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { eventually, postgresForTests, sqlOnce as sql } from '@switchyard/test-support';
import { runCooldownStateStoreContract } from '../contract.js';
import type { CooldownStoreChange } from '../cooldown/cooldownStateStore.js';
import { PostgresCooldownStateStore } from './postgresCooldownStateStore.js';

const postgres = await postgresForTests(import.meta.url);
// Channels are database-wide: this file's own, so parallel test files never hear each other.
const channel = `cooldown_test_${randomBytes(6).toString('hex')}`;
const T0 = Date.parse('2026-01-01T00:00:00Z');

if (!postgres.available) {
  test('PostgresCooldownStateStore', { skip: postgres.skip }, () => {});
} else {
  const { url } = postgres;
  const open = (applicationName?: string, backoffMs = 20) =>
    PostgresCooldownStateStore.open({
      connection: url,
      channel,
      max: 2,
      backoff: { initialMs: backoffMs, maxMs: backoffMs },
      ...(applicationName ? { applicationName } : {}),
    });

  runCooldownStateStoreContract('postgres', async () => {
    const store = await open();
    const peer = await open();
    await sql(url, 'TRUNCATE switchyard_cooldowns');
    return {
      store,
      peer,
      close: async () => {
        await store.close();
        await peer.close();
      },
    };
  });

  describe('PostgresCooldownStateStore', () => {
    const opened: PostgresCooldownStateStore[] = [];
    after(() => Promise.all(opened.map((s) => s.close())));

    test('with resyncIntervalMs, a change whose notification was lost (the connection never dropped) is reported by the next pass', async () => {
      const polling = await PostgresCooldownStateStore.open({ connection: url, channel, max: 2, resyncIntervalMs: 50 });
      opened.push(polling);
      const seen: CooldownStoreChange[] = [];
      polling.subscribe((change) => seen.push(change));
      const key = `silent-${randomBytes(4).toString('hex')}`;
      // Written behind the store's back: no NOTIFY is sent.
      await sql(url, 'INSERT INTO switchyard_cooldowns (key, reason, started_at, ends_at) VALUES ($1, $2, $3, $4)', [
        key,
        'manual',
        T0,
        T0 + 60_000,
      ]);
      await eventually('the pass to report the set', () => seen.some((c) => c.type === 'set' && c.period.key === key));
      await sql(url, 'DELETE FROM switchyard_cooldowns WHERE key = $1', [key]);
      await eventually('the pass to report the delete', () => seen.some((c) => c.type === 'delete' && c.period.key === key));
      assert.equal(seen.filter((c) => c.period.key === key).length, 2, 'each change reported once');
      assert.equal(polling.listenerState?.reconnects, 0);
    });

    test('after its LISTEN connection is killed, a handle reconnects and reports what it missed', async () => {
      await sql(url, 'TRUNCATE switchyard_cooldowns');
      const name = `cooldown-test-${randomBytes(4).toString('hex')}`;
      // Reconnecting after 0.5 to 1 s: the writes below land while it is certainly away.
      const deaf = await open(name, 1000);
      const writer = await open();
      opened.push(deaf, writer);
      const seen: CooldownStoreChange[] = [];
      deaf.subscribe((change) => seen.push(change));
      await writer.set({ key: 'stays', reason: 'manual', startedAt: T0, endsAt: T0 + 1000 });
      await writer.set({ key: 'goes', reason: 'manual', startedAt: T0, endsAt: T0 + 1000 });
      await eventually('the first two sets', () => seen.length === 2);

      const killed = await sql(url, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [name]);
      assert.equal(killed.rowCount, 1);
      await eventually('the handle to notice', () => deaf.listenerState?.connected === false);
      // Written while the handle may be deaf: only the resync after reconnection can report these.
      await writer.set({ key: 'new', reason: 'rate_limit', startedAt: T0, endsAt: T0 + 5000 });
      await writer.delete('goes');
      await writer.set({ key: 'stays', reason: 'error', startedAt: T0, endsAt: T0 + 9000 });

      await eventually('the reconnection', () => (deaf.listenerState?.reconnects ?? 0) >= 1);
      await eventually('every missed change', () => {
        const last = new Map<string, CooldownStoreChange>();
        for (const change of seen) last.set(change.period.key, change);
        return (
          last.get('new')?.type === 'set' &&
          last.get('goes')?.type === 'delete' &&
          last.get('stays')?.type === 'set' &&
          last.get('stays')?.period.endsAt === T0 + 9000
        );
      });
      // And it hears live changes again.
      await writer.set({ key: 'live', reason: 'manual', startedAt: T0, endsAt: T0 + 1 });
      await eventually('a live change after reconnection', () => seen.some((c) => c.period.key === 'live'));
    });

    test('a delete that a resync reported before its notification arrived is reported once', async () => {
      const store = await open();
      opened.push(store);
      const key = `raced-${randomBytes(4).toString('hex')}`;
      const seen: CooldownStoreChange[] = [];
      store.subscribe((change) => {
        if (change.period.key === key || change.period.key === `${key}-barrier`) seen.push(change);
      });
      const period = { key, reason: 'rate_limit', startedAt: T0, endsAt: T0 + 60_000 } as const;
      await store.set(period);
      await eventually('the set', () => seen.length === 1);
      // The delete commits; the resync lists the table before its notification arrives (sent here by hand, late).
      await sql(url, 'DELETE FROM switchyard_cooldowns WHERE key = $1', [key]);
      await store.resync();
      await sql(url, 'SELECT pg_notify($1, $2)', [channel, JSON.stringify({ type: 'delete', endedBy: 'expiry', period })]);
      // Notifications arrive in order: once the barrier is heard, the late delete has been too.
      await store.set({ ...period, key: `${key}-barrier` });
      await eventually('the barrier', () => seen.some((c) => c.period.key === `${key}-barrier`));
      assert.deepEqual(
        seen.filter((c) => c.period.key === key).map((c) => (c.type === 'delete' ? `delete:${c.endedBy}` : c.type)),
        ['set', 'delete:recover'],
      );
    });

    test('a foreign payload on the channel is counted and skipped; the next change still arrives', async () => {
      const store = await open();
      opened.push(store);
      const seen: string[] = [];
      store.subscribe((change) => seen.push(change.period.key));
      await sql(url, 'SELECT pg_notify($1, $2)', [channel, '{"type":"set","period":{"key":""}}']);
      await sql(url, 'SELECT pg_notify($1, $2)', [channel, 'not json']);
      await store.set({ key: 'after-junk', reason: 'manual', startedAt: T0, endsAt: T0 + 1 });
      await eventually('the valid change', () => seen.includes('after-junk'));
      assert.equal(store.invalidNotifications, 2);
    });

    test('a key too long for NOTIFY is refused before anything is written', async () => {
      const store = await open();
      opened.push(store);
      const key = 'k'.repeat(8000);
      await assert.rejects(store.set({ key, reason: 'manual', startedAt: T0, endsAt: T0 }), /too long/);
      assert.equal(await store.get(key), undefined);
    });
  });

  test('several handles opening a fresh schema at once apply each migration exactly once', async () => {
    const fresh = await postgresForTests(import.meta.url);
    assert.ok(fresh.available);
    const stores = await Promise.all(
      Array.from({ length: 6 }, () => PostgresCooldownStateStore.open({ connection: fresh.url, channel, max: 1 })),
    );
    try {
      const { rows } = await sql(fresh.url, 'SELECT version FROM switchyard_cooldown_migrations');
      assert.deepEqual(
        rows.map((r) => r.version),
        [1, 2],
      );
      await stores[0]!.set({ key: 'x', reason: 'manual', startedAt: T0, endsAt: T0 + 1 });
      assert.equal((await stores[5]!.get('x'))?.key, 'x');
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
}
