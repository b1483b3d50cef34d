/**
 * @module @switchyard/core-routing/contract
 * The contract every `CooldownStateStore` adapter must pass. The in-memory
 * store runs it here; the PostgreSQL store runs the same suite, so "shares
 * cooldowns across nodes" means one thing everywhere.
 *
 * @example
 * ```ts
 * import { runCooldownStateStoreContract } from '@switchyard/core-routing/contract';
 * runCooldownStateStoreContract('postgres', async () => {
 *   const store = await PostgresCooldownStateStore.open({ connection: url, channel });
 *   const peer = await PostgresCooldownStateStore.open({ connection: url, channel });
 *   return { store, peer, close: async () => { await store.close(); await peer.close(); } };
 * });
 * ```
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { CooldownManager } from './cooldown/cooldownManager.js';
import type { CooldownPeriod, CooldownStateStore, CooldownStoreChange } from './cooldown/cooldownStateStore.js';

/** A store under test. */
export interface CooldownStoreSubject {
  store: CooldownStateStore;
  /**
   * A second handle on the same storage, as another node would open it (a
   * second connection). Omit when the store is one object in one process;
   * the suite then uses `store` for both sides.
   */
  peer?: CooldownStateStore;
  /** Releases resources (and removes the test's data). */
  close?: () => Promise<void>;
}

/** Options of {@link runCooldownStateStoreContract}. */
export interface CooldownStoreContractOptions {
  /** How long to wait for a change to reach a subscriber. Default 5,000 ms. */
  notifyTimeoutMs?: number;
}

const T0 = Date.parse('2026-01-01T00:00:00Z');
const period = (key: string, endsIn = 60_000, reason: CooldownPeriod['reason'] = 'rate_limit'): CooldownPeriod => ({
  key,
  reason,
  startedAt: T0,
  endsAt: T0 + endsIn,
});

/** Registers the `CooldownStateStore` contract tests for one adapter. */
export function runCooldownStateStoreContract(
  name: string,
  makeSubject: () => Promise<CooldownStoreSubject>,
  options: CooldownStoreContractOptions = {},
): void {
  const timeoutMs = options.notifyTimeoutMs ?? 5000;

  /** Resolves when `predicate` holds, polling; fails the test after the timeout. */
  const eventually = async (what: string, predicate: () => boolean | Promise<boolean>) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await predicate())) {
      if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  const withSubject = (fn: (store: CooldownStateStore, peer: CooldownStateStore) => Promise<void>) => async () => {
    const subject = await makeSubject();
    try {
      await fn(subject.store, subject.peer ?? subject.store);
    } finally {
      await subject.close?.();
    }
  };

  describe(`CooldownStateStore contract: ${name}`, () => {
    test(
      'an empty store lists nothing and gets nothing',
      withSubject(async (store) => {
        assert.deepEqual(await store.list(), []);
        assert.equal(await store.get('openai'), undefined);
        assert.equal(await store.delete('openai'), false);
      }),
    );

    test(
      'set stores one period per key, exactly, and replaces it on the next set',
      withSubject(async (store, peer) => {
        const odd = period('openai/cred "1" é/ü', 123_456.5, 'manual');
        await store.set(period('openai'));
        await store.set(odd);
        assert.deepEqual(await store.get('openai'), period('openai'));
        assert.deepEqual(await peer.get(odd.key), odd, 'any key and fractional times round-trip');
        const longer = { ...period('openai'), endsAt: T0 + 600_000, reason: 'error' as const };
        await store.set(longer);
        assert.deepEqual(await peer.get('openai'), longer);
        const listed = (await peer.list()).sort((a, b) => a.key.localeCompare(b.key));
        assert.deepEqual(
          listed,
          [longer, odd].sort((a, b) => a.key.localeCompare(b.key)),
        );
      }),
    );

    test(
      "a period keeps its note (an operator's reason); one without a note has none",
      withSubject(async (store, peer) => {
        const noted = { ...period('openai'), note: 'maintenance window, ticket #42' };
        await store.set(noted);
        await store.set(period('anthropic'));
        assert.deepEqual(await peer.get('openai'), noted);
        assert.deepEqual(await peer.get('anthropic'), period('anthropic'));
        assert.deepEqual(
          (await peer.list()).find((p) => p.key === 'openai'),
          noted,
        );
        await store.set(period('openai'));
        assert.deepEqual(await peer.get('openai'), period('openai'), 'a later period without a note clears it');
      }),
    );

    test(
      'returned periods are copies: changing one changes nothing stored',
      withSubject(async (store) => {
        const original = period('a');
        await store.set(original);
        original.endsAt = 0;
        const got = (await store.get('a'))!;
        got.endsAt = 1;
        (await store.list())[0]!.endsAt = 2;
        assert.deepEqual(await store.get('a'), period('a'));
      }),
    );

    test(
      'delete removes; with ifMatches it removes only that very period',
      withSubject(async (store, peer) => {
        await store.set(period('a'));
        await store.set(period('b'));
        const newer = { ...period('a'), endsAt: T0 + 120_000 };
        await peer.set(newer);
        assert.equal(await store.delete('a', { ifMatches: period('a'), endedBy: 'expiry' }), false, 'a newer period is not removed');
        assert.deepEqual(await store.get('a'), newer);
        assert.equal(await store.delete('a', { ifMatches: newer, endedBy: 'expiry' }), true);
        assert.equal(await peer.get('a'), undefined);
        assert.equal(await peer.delete('b'), true);
        assert.equal(await store.delete('b'), false);
        assert.deepEqual(await store.list(), []);
      }),
    );

    test(
      'subscribers on both handles see every change, in order, with the removed period and the cause',
      withSubject(async (store, peer) => {
        const seenHere: CooldownStoreChange[] = [];
        const seenThere: CooldownStoreChange[] = [];
        const offHere = store.subscribe((change) => seenHere.push(change));
        const offThere = peer.subscribe((change) => seenThere.push(change));
        try {
          const longer = { ...period('a'), endsAt: T0 + 90_000 };
          await store.set(period('a'));
          await peer.set(longer);
          await store.delete('a', { endedBy: 'health_check' });
          await store.delete('missing');
          const expected: CooldownStoreChange[] = [
            { type: 'set', period: period('a') },
            { type: 'set', period: longer },
            { type: 'delete', period: longer, endedBy: 'health_check' },
          ];
          await eventually('three changes on both handles', () => seenHere.length >= 3 && seenThere.length >= 3);
          assert.deepEqual(seenHere, expected);
          assert.deepEqual(seenThere, expected);
        } finally {
          offHere();
          offThere();
        }
      }),
    );

    test(
      'delete without endedBy reports recover; a failed conditional delete reports nothing',
      withSubject(async (store, peer) => {
        const seen: CooldownStoreChange[] = [];
        const off = peer.subscribe((change) => seen.push(change));
        try {
          await store.set(period('a'));
          await store.delete('a', { ifMatches: period('a', 1) });
          await store.delete('a');
          await eventually('two changes', () => seen.length >= 2);
          await new Promise((resolve) => setTimeout(resolve, 20));
          assert.deepEqual(seen, [
            { type: 'set', period: period('a') },
            { type: 'delete', period: period('a'), endedBy: 'recover' },
          ]);
        } finally {
          off();
        }
      }),
    );

    test(
      'after unsubscribing, a listener hears nothing more',
      withSubject(async (store, peer) => {
        const seen: CooldownStoreChange[] = [];
        const marker: CooldownStoreChange[] = [];
        const off = peer.subscribe((change) => seen.push(change));
        const offMarker = peer.subscribe((change) => marker.push(change));
        off();
        await store.set(period('a'));
        await eventually('the change to reach the other listener', () => marker.length >= 1);
        offMarker();
        assert.deepEqual(seen, []);
      }),
    );

    test(
      'two CooldownManagers on the two handles share a cooldown and its end',
      withSubject(async (store, peer) => {
        const clock = new FakeScheduler(Date.now());
        const a = new CooldownManager({ scheduler: clock, store, detection: { errorThreshold: 1 } });
        const b = new CooldownManager({ scheduler: clock, store: peer });
        a.start();
        b.start();
        try {
          const started = a.recordFailure('openai', { kind: 'rate_limit', retryAfterMs: 600_000 })!;
          await a.flush();
          await eventually('node b to see the cooldown', () => b.isCooling('openai'));
          assert.deepEqual(b.period('openai'), started);
          b.recover('openai');
          await b.flush();
          await eventually('node a to see the recovery', () => !a.isCooling('openai'));
          assert.deepEqual(await store.list(), []);
        } finally {
          a.stop();
          b.stop();
        }
      }),
    );
  });
}
