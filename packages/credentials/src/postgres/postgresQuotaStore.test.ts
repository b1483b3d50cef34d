import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { eventually, postgresForTests, sqlOnce } from '@switchyard/test-support';
import { runQuotaStoreContract } from '../contract.js';
import type { QuotaTotal } from '../store/quotaStore.js';
import { PostgresQuotaStore } from './postgresQuotaStore.js';

const postgres = await postgresForTests(import.meta.url);

if (!postgres.available) {
  test('PostgresQuotaStore', { skip: postgres.skip }, () => {});
} else {
  const { url } = postgres;
  // NOTIFY channels are database-wide: this file's own, so parallel runs never hear each other.
  const channel = `t_quota_${randomBytes(4).toString('hex')}`;
  const open = () => PostgresQuotaStore.open({ connection: url, max: 3, channel });

  runQuotaStoreContract(
    'postgres',
    async () => {
      const store = await open();
      await sqlOnce(url, 'TRUNCATE switchyard_quota');
      return { store, reopen: open };
    },
    { durable: true },
  );

  test('three handles adding 300 deltas each, all at once, end with exactly the sum', async () => {
    const handles = await Promise.all([open(), open(), open()]);
    try {
      const period = '2026-05-01T00:00:00.000Z';
      let expected = 0;
      const adds: Promise<unknown>[] = [];
      for (const [h, store] of handles.entries()) {
        for (let i = 0; i < 300; i++) {
          const tokens = 1 + ((i * 7 + h * 13) % 50);
          expected += tokens;
          adds.push(store.add([{ id: 'shared', tokens, period_start: period }]));
        }
      }
      const totals = (await Promise.all(adds)) as Map<string, { used: number }>[];
      assert.deepEqual((await handles[0]!.load()).get('shared'), { used: expected, period_start: period });
      // Each add saw its own exact total: 900 distinct running sums, the largest being the final one.
      const seen = totals.map((m) => m.get('shared')!.used);
      assert.equal(new Set(seen).size, 900);
      assert.equal(Math.max(...seen), expected);
    } finally {
      await Promise.all(handles.map((h) => h.close()));
    }
  });

  test('adds of several ids in one batch keep their order, and bad tokens are refused before anything is written', async () => {
    const store = await open();
    try {
      const totals = await store.add([
        { id: 'b1', tokens: 5, period_start: null },
        { id: 'b1', tokens: 6, period_start: null },
        { id: 'b2', tokens: 1, period_start: '2026-05-01T00:00:00.000Z' },
      ]);
      assert.deepEqual(totals.get('b1'), { used: 11, period_start: null });
      await assert.rejects(
        store.add([
          { id: 'b3', tokens: 1, period_start: null },
          { id: 'b3', tokens: -1, period_start: null },
        ]),
        {
          code: 'invalid_argument',
        },
      );
      assert.equal((await store.load()).has('b3'), false);
    } finally {
      await store.close();
    }
  });

  test('a second handle hears every committed total, adds and replacements, within the same period rules', async () => {
    const [writer, watcher] = await Promise.all([open(), open()]);
    try {
      const heard: QuotaTotal[] = [];
      const unwatch = watcher.watch((total) => heard.push(total));
      const period = '2026-06-01T00:00:00.000Z';
      await writer.add([{ id: 'w1', tokens: 7, period_start: period }]);
      await writer.add([
        { id: 'w1', tokens: 5, period_start: period },
        { id: 'w2', tokens: 1, period_start: null },
      ]);
      // An older period changes nothing, and its announcement says so (the stored total, unchanged).
      await writer.add([{ id: 'w1', tokens: 100, period_start: '2026-05-01T00:00:00.000Z' }]);
      await writer.set('w1', { used: 0, period_start: period });
      await eventually('the watcher to hear five totals', () => heard.length === 5, 5_000);
      assert.deepEqual(heard, [
        { id: 'w1', used: 7, period_start: period, replaced: false },
        { id: 'w1', used: 12, period_start: period, replaced: false },
        { id: 'w2', used: 1, period_start: null, replaced: false },
        { id: 'w1', used: 12, period_start: period, replaced: false },
        { id: 'w1', used: 0, period_start: period, replaced: true },
      ]);
      assert.equal(watcher.invalidNotifications, 0);
      // After unsubscribing nothing more arrives; a foreign payload on the channel is counted and dropped.
      unwatch();
      await writer.add([{ id: 'w1', tokens: 1, period_start: period }]);
      await sqlOnce(url, `SELECT pg_notify('${channel}', 'not json')`);
      await eventually('the foreign payload to be counted', () => watcher.invalidNotifications === 1, 5_000);
      assert.equal(heard.length, 5);
    } finally {
      await Promise.all([writer.close(), watcher.close()]);
    }
  });

  test('an id too long to announce is refused before anything is written', async () => {
    const store = await open();
    try {
      const id = 'x'.repeat(7001);
      await assert.rejects(store.add([{ id, tokens: 1, period_start: null }]), { code: 'invalid_argument' });
      await assert.rejects(store.set(id, { used: 1, period_start: null }), { code: 'invalid_argument' });
      assert.equal((await store.load()).has(id), false);
    } finally {
      await store.close();
    }
  });
}
