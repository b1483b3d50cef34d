import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCooldownStateStoreContract } from '../contract.js';
import { RoutingError } from '../errors.js';
import { MemoryCooldownStateStore } from './cooldownStateStore.js';

runCooldownStateStoreContract('memory', async () => ({ store: new MemoryCooldownStateStore() }));

test('MemoryCooldownStateStore refuses a malformed period, naming the field', async () => {
  const store = new MemoryCooldownStateStore();
  const base = { key: 'a', reason: 'manual', startedAt: 10, endsAt: 20 };
  const cases: Array<[unknown, RegExp]> = [
    [null, /period must be an object/],
    [{ ...base, key: '' }, /period\.key/],
    [{ ...base, reason: 'sleepy' }, /period\.reason/],
    [{ ...base, startedAt: Number.NaN }, /period\.startedAt/],
    [{ ...base, endsAt: 5 }, /period\.endsAt/],
    [{ ...base, endsAt: Number.POSITIVE_INFINITY }, /period\.endsAt/],
  ];
  for (const [value, pattern] of cases) {
    await assert.rejects(
      store.set(value as never),
      (e: unknown) => e instanceof RoutingError && e.code === 'invalid_argument' && pattern.test(e.message),
    );
  }
  assert.deepEqual(await store.list(), []);
});

test('a throwing subscriber does not keep the change from the others', async () => {
  const store = new MemoryCooldownStateStore();
  store.subscribe(() => {
    throw new Error('listener bug');
  });
  const seen: string[] = [];
  store.subscribe((change) => seen.push(change.type));
  await store.set({ key: 'a', reason: 'manual', startedAt: 0, endsAt: 1 });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(seen, ['set']);
});
