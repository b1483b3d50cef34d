/**
 * @module @switchyard/observability/contract
 * The contract every `UsageStore` adapter must pass. The memory store runs
 * it here; the gateway's SQLite and PostgreSQL stores run the very same
 * suite, so "a usage store" means one thing everywhere.
 *
 * @example
 * ```ts
 * import { runUsageStoreContract } from '@switchyard/observability/contract';
 * runUsageStoreContract('my store', async () => ({ store: await MyStore.open(), close: () => cleanup() }));
 * ```
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { USAGE_MINUTE_MS, type UsageRollup, type UsageStore } from './usage/usageStore.js';

/** A usage store under test. */
export interface UsageStoreSubject {
  store: UsageStore;
  /** Opens the same storage again (a restart); omit for volatile stores. */
  reopen?: () => Promise<UsageStore>;
  /** Opens another writer on the same storage (another node); omit for single-writer stores. */
  peer?: () => Promise<UsageStore>;
  close?: () => Promise<void>;
}

const T0 = Date.parse('2026-03-01T12:00:00Z');
const M = USAGE_MINUTE_MS;

/** A rollup for contract tests; `overrides` replace fields. */
export function sampleRollup(overrides: Partial<UsageRollup> = {}): UsageRollup {
  return {
    minute: T0,
    keyId: 'static:ci',
    keyName: 'ci',
    tenant: 'team-a',
    provider: 'openai',
    model: 'gpt-4o',
    requests: 1,
    errors: 0,
    cacheHits: 0,
    inputTokens: 10,
    outputTokens: 20,
    cost: 0.25,
    ...overrides,
  };
}

/**
 * Registers the `UsageStore` contract tests for one adapter. `open` gives a fresh, empty store per test.
 *
 * @example
 * ```ts
 * runUsageStoreContract('memory', async () => ({ store: new MemoryUsageStore() }));
 * ```
 */
export function runUsageStoreContract(name: string, open: () => Promise<UsageStoreSubject>): void {
  describe(`UsageStore contract: ${name}`, () => {
    async function withSubject(run: (subject: UsageStoreSubject) => Promise<void>): Promise<void> {
      const subject = await open();
      try {
        await run(subject);
      } finally {
        await subject.store.close();
        await subject.close?.();
      }
    }

    test('add increments a row; every counter sums', () =>
      withSubject(async ({ store }) => {
        await store.add([sampleRollup()]);
        await store.add([sampleRollup({ requests: 2, errors: 1, cacheHits: 1, inputTokens: 5, outputTokens: 7, cost: 0.5 })]);
        const buckets = await store.series({ from: T0, to: T0 + M, groupBy: 'key', stepMs: M });
        assert.equal(buckets.length, 1);
        const [bucket] = buckets;
        assert.equal(bucket!.start, T0);
        assert.equal(bucket!.group, 'static:ci');
        assert.equal(bucket!.label, 'ci');
        assert.equal(bucket!.requests, 3);
        assert.equal(bucket!.errors, 1);
        assert.equal(bucket!.cacheHits, 1);
        assert.equal(bucket!.inputTokens, 15);
        assert.equal(bucket!.outputTokens, 27);
        assert.ok(Math.abs(bucket!.cost - 0.75) < 1e-9);
      }));

    test('series groups by each dimension, in start then group order', () =>
      withSubject(async ({ store }) => {
        await store.add([
          sampleRollup(),
          sampleRollup({ keyId: 'static:web', keyName: 'web', tenant: 'team-b', provider: 'anthropic', model: 'claude' }),
          sampleRollup({ minute: T0 + M, model: 'gpt-4o-mini', requests: 4 }),
        ]);
        const groups = async (groupBy: 'key' | 'tenant' | 'provider' | 'model') =>
          (await store.series({ from: T0, to: T0 + 2 * M, groupBy, stepMs: 2 * M })).map((b) => [b.group, b.requests]);
        assert.deepEqual(await groups('key'), [
          ['static:ci', 5],
          ['static:web', 1],
        ]);
        assert.deepEqual(await groups('tenant'), [
          ['team-a', 5],
          ['team-b', 1],
        ]);
        assert.deepEqual(await groups('provider'), [
          ['anthropic', 1],
          ['openai', 5],
        ]);
        assert.deepEqual(await groups('model'), [
          ['claude', 1],
          ['gpt-4o', 1],
          ['gpt-4o-mini', 4],
        ]);
        const perMinute = await store.series({ from: T0, to: T0 + 2 * M, groupBy: 'tenant', stepMs: M });
        assert.deepEqual(
          perMinute.map((b) => [b.start, b.group, b.requests]),
          [
            [T0, 'team-a', 1],
            [T0, 'team-b', 1],
            [T0 + M, 'team-a', 4],
          ],
        );
      }));

    test('the range is [from, to): buckets start at from, every step', () =>
      withSubject(async ({ store }) => {
        await store.add([
          sampleRollup({ minute: T0 - M }),
          sampleRollup({ minute: T0 + 2 * M }),
          sampleRollup({ minute: T0 + 4 * M }),
          sampleRollup({ minute: T0 + 5 * M }),
        ]);
        const buckets = await store.series({ from: T0, to: T0 + 5 * M, groupBy: 'tenant', stepMs: 3 * M });
        assert.deepEqual(
          buckets.map((b) => [b.start, b.requests]),
          [
            [T0, 1],
            [T0 + 3 * M, 1],
          ],
        );
      }));

    test('a tenant change of one key is a row of its own', () =>
      withSubject(async ({ store }) => {
        await store.add([sampleRollup(), sampleRollup({ tenant: 'team-z' })]);
        const byTenant = await store.series({ from: T0, to: T0 + M, groupBy: 'tenant', stepMs: M });
        assert.deepEqual(
          byTenant.map((b) => b.group),
          ['team-a', 'team-z'],
        );
        const byKey = await store.series({ from: T0, to: T0 + M, groupBy: 'key', stepMs: M });
        assert.equal(byKey[0]!.requests, 2);
      }));

    test('text is kept as given (quotes, commas, unicode)', () =>
      withSubject(async ({ store }) => {
        const model = 'odd "model", ünïcode\nline';
        await store.add([sampleRollup({ model })]);
        const [bucket] = await store.series({ from: T0, to: T0 + M, groupBy: 'model', stepMs: M });
        assert.equal(bucket!.group, model);
      }));

    test('prune deletes the minutes before a time, and only those', () =>
      withSubject(async ({ store }) => {
        await store.add([sampleRollup({ minute: T0 - 2 * M }), sampleRollup({ minute: T0 - M }), sampleRollup({ minute: T0 })]);
        assert.equal(await store.prune(T0 - M), 1);
        const buckets = await store.series({ from: T0 - 10 * M, to: T0 + M, groupBy: 'tenant', stepMs: M });
        assert.deepEqual(
          buckets.map((b) => b.start),
          [T0 - M, T0],
        );
      }));

    test('a batch naming one minute and dimensions twice adds both', () =>
      withSubject(async ({ store }) => {
        await store.add([
          sampleRollup({ requests: 2, inputTokens: 1, cost: 0.5 }),
          sampleRollup({ keyName: 'ci-renamed', requests: 3, outputTokens: 4, cost: 0.25 }),
        ]);
        const [bucket] = await store.series({ from: T0, to: T0 + M, groupBy: 'key', stepMs: M });
        assert.equal(bucket!.requests, 5);
        assert.equal(bucket!.inputTokens, 11);
        assert.equal(bucket!.outputTokens, 24);
        assert.ok(Math.abs(bucket!.cost - 0.75) < 1e-9);
        assert.equal(bucket!.label, 'ci-renamed');
      }));

    test('an empty batch is fine', () =>
      withSubject(async ({ store }) => {
        await store.add([]);
        assert.deepEqual(await store.series({ from: T0, to: T0 + M, groupBy: 'key', stepMs: M }), []);
      }));

    test('usage survives a reopen', async (t) => {
      const subject = await open();
      if (!subject.reopen) {
        await subject.store.close();
        await subject.close?.();
        t.skip('a volatile store');
        return;
      }
      try {
        await subject.store.add([sampleRollup({ requests: 3 })]);
        await subject.store.close();
        const again = await subject.reopen();
        try {
          await again.add([sampleRollup({ requests: 2 })]);
          const [bucket] = await again.series({ from: T0, to: T0 + M, groupBy: 'key', stepMs: M });
          assert.equal(bucket!.requests, 5);
        } finally {
          await again.close();
        }
      } finally {
        await subject.close?.();
      }
    });

    test('two writers on one storage: the series is their sum', async (t) => {
      const subject = await open();
      if (!subject.peer) {
        await subject.store.close();
        await subject.close?.();
        t.skip('a single-writer store');
        return;
      }
      const peer = await subject.peer();
      try {
        await Promise.all([
          subject.store.add([sampleRollup({ requests: 3 }), sampleRollup({ tenant: 'team-b' })]),
          peer.add([sampleRollup({ requests: 4, cost: 1 })]),
        ]);
        for (const reader of [subject.store, peer]) {
          const buckets = await reader.series({ from: T0, to: T0 + M, groupBy: 'tenant', stepMs: M });
          assert.deepEqual(
            buckets.map((b) => [b.group, b.requests]),
            [
              ['team-a', 7],
              ['team-b', 1],
            ],
          );
          assert.ok(Math.abs(buckets[0]!.cost - 1.25) < 1e-9);
        }
      } finally {
        await peer.close();
        await subject.store.close();
        await subject.close?.();
      }
    });
  });
}
