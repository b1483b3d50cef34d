import assert from 'node:assert/strict';
import { test } from 'node:test';
import { postgresForTests, sqlOnce } from '@switchyard/test-support';
import { runQuotaStoreContract } from '../contract.js';
import { PostgresQuotaStore } from './postgresQuotaStore.js';

const postgres = await postgresForTests(import.meta.url);

if (!postgres.available) {
  test('PostgresQuotaStore', { skip: postgres.skip }, () => {});
} else {
  const { url } = postgres;
  const open = () => PostgresQuotaStore.open({ connection: url, max: 3 });

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
}
