import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { requestEnd } from '../testing/fixtures.js';
import { RollupTable } from './rollupTable.js';
import { UsageRecorder } from './usageRecorder.js';
import { MemoryUsageStore, type UsageRollup } from './usageStore.js';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const M = 60_000;
const alice = { keyId: 'ck_alice', name: 'alice', tenant: 'team-a' };

/** Counts one request of `tokens` input tokens into the row of `minute`; returns the row. */
function count(table: RollupTable, minute: number, tokens = 1, keyId = 'ck_a', keyName = 'a'): UsageRollup {
  const row = table.row(minute, keyId, keyName, 'team-a', 'openai', 'gpt-4o');
  row.requests++;
  row.inputTokens += tokens;
  return row;
}

const summary = (rows: UsageRollup[]) =>
  rows.map((r) => [r.minute - T0, r.keyId, r.keyName, r.requests, r.inputTokens]).sort((a, b) => String(a).localeCompare(String(b)));

test('a row is reused across takes: each take holds only the counts since the last, and the row is zeroed in place', () => {
  const table = new RollupTable();
  const row = count(table, T0, 5);
  count(table, T0, 7);
  assert.equal(table.size, 1);
  const first = table.take();
  assert.deepEqual(summary(first), [[0, 'ck_a', 'a', 2, 12]]);
  assert.notEqual(first[0], row, 'the batch holds a copy: counting on does not change what is being written');
  assert.equal(row.requests, 0);
  assert.equal(table.size, 0);
  assert.deepEqual(table.take(), [], 'nothing counted, nothing taken');
  assert.equal(count(table, T0, 3), row, 'the same row object counts the next interval');
  assert.deepEqual(summary(table.take()), [[0, 'ck_a', 'a', 1, 3]]);
  assert.deepEqual(summary(first), [[0, 'ck_a', 'a', 2, 12]], 'an earlier batch is untouched by later counts');
  assert.equal(table.held, 1);
});

test('a later minute moves a row with counts out whole; a taken row is retargeted to the next minute', () => {
  const table = new RollupTable();
  const first = count(table, T0, 1);
  const second = count(table, T0 + M, 2);
  assert.notEqual(second, first, 'the counted minute is kept apart');
  assert.equal(table.size, 2);
  assert.deepEqual(summary(table.take()), [
    [0, 'ck_a', 'a', 1, 1],
    [M, 'ck_a', 'a', 1, 2],
  ]);
  assert.equal(count(table, T0 + 2 * M, 4), second, 'a zeroed row takes the next minute');
  assert.deepEqual(summary(table.take()), [[2 * M, 'ck_a', 'a', 1, 4]]);
  assert.equal(table.held, 1);
});

test('a request of an earlier minute than its row (it ended late) gets a row of its own', () => {
  const table = new RollupTable();
  count(table, T0 + M, 1);
  count(table, T0, 10);
  count(table, T0 + M, 100);
  assert.equal(table.size, 2);
  assert.deepEqual(summary(table.take()), [
    [0, 'ck_a', 'a', 1, 10],
    [M, 'ck_a', 'a', 2, 101],
  ]);
});

test('the latest key name is what a row is written with', () => {
  const table = new RollupTable();
  count(table, T0, 1, 'ck_a', 'old');
  count(table, T0, 1, 'ck_a', 'new');
  assert.deepEqual(summary(table.take()), [[0, 'ck_a', 'new', 2, 2]]);
});

test('rows without counts for over a minute are dropped at a take; active ones stay', () => {
  const table = new RollupTable();
  count(table, T0, 1, 'ck_idle');
  count(table, T0, 1, 'ck_busy');
  table.take();
  assert.equal(table.held, 2);
  count(table, T0 + M, 1, 'ck_busy');
  table.take();
  assert.equal(table.held, 2, 'the idle row is kept while its minute is the previous one');
  count(table, T0 + 2 * M, 1, 'ck_busy');
  assert.deepEqual(summary(table.take()), [[2 * M, 'ck_busy', 'a', 1, 1]]);
  assert.equal(table.held, 1, 'the idle key is gone');
  count(table, T0 + 2 * M, 1, 'ck_idle');
  assert.deepEqual(summary(table.take()), [[2 * M, 'ck_idle', 'a', 1, 1]], 'and comes back on its next request');
});

test('the recorder writes exact deltas across flushes with reused rows, and a failed write merges back', async () => {
  const clock = new FakeScheduler(T0);
  const batches: UsageRollup[][] = [];
  let failing = false;
  const store = new (class extends MemoryUsageStore {
    override async add(rollups: readonly UsageRollup[]): Promise<void> {
      if (failing) throw new Error('disk full');
      batches.push(rollups.map((r) => ({ ...r })));
      await super.add(rollups);
    }
  })();
  const recorder = new UsageRecorder({ store, scheduler: clock, flushIntervalMs: 1_000 });
  const requests = (n: number, at: number) => {
    for (let i = 0; i < n; i++) recorder.record(requestEnd({ client: alice, at, tokens: { input: 10, output: 1 } }));
  };
  requests(3, T0);
  await recorder.flush();
  requests(2, T0 + 10);
  await recorder.flush();
  failing = true;
  requests(4, T0 + 20);
  await recorder.flush();
  assert.equal(recorder.pendingRows, 1, 'the failed batch is pending again');
  requests(1, T0 + 30);
  requests(5, T0 + M);
  failing = false;
  await recorder.flush();
  assert.equal(recorder.pendingRows, 0);
  const written = batches.map((batch) => batch.map((r) => [r.minute - T0, r.requests, r.inputTokens, r.outputTokens]));
  assert.deepEqual(written, [
    [[0, 3, 30, 3]],
    [[0, 2, 20, 2]],
    [
      [0, 5, 50, 5],
      [M, 5, 50, 5],
    ].sort((a, b) => a[0]! - b[0]!),
  ]);
  const totals = await store.series({ from: T0, to: T0 + 2 * M, groupBy: 'key', stepMs: M });
  assert.deepEqual(
    totals.map((b) => [b.start - T0, b.requests, b.inputTokens]),
    [
      [0, 10, 100],
      [M, 5, 50],
    ],
  );
});
