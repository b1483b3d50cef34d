/**
 * The guard's batched last-used times, on a fake clock and a memory store: each flush writes every key used
 * since the last one, once, with its latest time; a failed write keeps them for the next; a key updated
 * between its use and the flush keeps its time.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { ClientKeyGuard, type KeyAdmission } from './clientKeyGuard.js';
import { CreateClientKeySchema, createRecord } from './clientKeyRecord.js';
import { LocalBudgetLedger, MemoryClientKeyStore } from './clientKeyStore.js';

const T0 = Date.UTC(2026, 10, 28, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

/** A memory store that records each batch of last-used times, and fails while `failing` is set. */
class RecordingStore extends MemoryClientKeyStore {
  batches: Record<string, string>[] = [];
  failing = false;
  override async recordLastUsed(lastUsed: ReadonlyMap<string, string>): Promise<void> {
    if (this.failing) throw new Error('disk full');
    this.batches.push(Object.fromEntries(lastUsed));
    await super.recordLastUsed(lastUsed);
  }
}

async function guardWithKeys(names: string[]) {
  const clock = new FakeScheduler(T0);
  const store = new RecordingStore();
  const errors: string[] = [];
  const guard = await ClientKeyGuard.open({ store, ledger: new LocalBudgetLedger(), clock, onError: (e) => errors.push(e.message) });
  const keys = names.map((name) => {
    const { record, secret } = createRecord(
      CreateClientKeySchema.parse({ name, budget: { limit: 100, unit: 'requests', period: 'daily' } }),
      T0,
    );
    guard.apply(record);
    return { id: record.id, secret, record };
  });
  const use = (secret: string) => {
    const admitted = guard.admit(guard.identify(secret)!, 'any-model') as KeyAdmission;
    assert.ok('key' in admitted);
    guard.settle(admitted, undefined);
  };
  return { clock, store, guard, keys, use, errors };
}

test('a flush writes each key used since the last one once, with its latest time, and the view shows it before', async () => {
  const { clock, store, guard, keys, use } = await guardWithKeys(['a', 'b']);
  const [a, b] = keys;
  use(a!.secret);
  await clock.advance(1_000);
  use(a!.secret);
  assert.equal(guard.view(guard.get(a!.id)!).last_used_at, iso(T0 + 1_000), 'the view reads the time before any flush');
  assert.equal(guard.view(guard.get(b!.id)!).last_used_at, null);
  await guard.flush();
  assert.deepEqual(store.batches, [{ [a!.id]: iso(T0 + 1_000) }]);
  assert.equal(guard.get(a!.id)!.last_used_at, iso(T0 + 1_000), 'the record in force learns the time');
  await guard.flush();
  assert.deepEqual(store.batches[1], {}, 'a key unused since the last flush is not written again');
  await clock.advance(1_000);
  use(b!.secret);
  await guard.flush();
  assert.deepEqual(store.batches[2], { [b!.id]: iso(T0 + 2_000) });
});

test('a failed write keeps its keys for the next flush, with times learnt meanwhile', async () => {
  const { clock, store, guard, keys, use, errors } = await guardWithKeys(['a', 'b']);
  const [a, b] = keys;
  use(a!.secret);
  use(b!.secret);
  store.failing = true;
  await guard.flush();
  assert.deepEqual(errors, ['disk full']);
  await clock.advance(5_000);
  use(a!.secret);
  store.failing = false;
  await guard.flush();
  assert.deepEqual(store.batches, [{ [a!.id]: iso(T0 + 5_000), [b!.id]: iso(T0) }]);
  await guard.flush();
  assert.deepEqual(store.batches[1], {}, 'each key once');
});

test('a key updated between its use and the flush keeps its pending time', async () => {
  const { clock, store, guard, keys, use } = await guardWithKeys(['a']);
  const [a] = keys;
  use(a!.secret);
  await clock.advance(2_000);
  guard.apply({ ...guard.get(a!.id)!, name: 'renamed' });
  assert.equal(guard.view(guard.get(a!.id)!).last_used_at, iso(T0));
  await guard.flush();
  assert.deepEqual(store.batches, [{ [a!.id]: iso(T0) }]);
  assert.equal(guard.view(guard.get(a!.id)!).name, 'renamed');
  use(a!.secret);
  await guard.flush();
  assert.deepEqual(store.batches[1], { [a!.id]: iso(T0 + 2_000) });
});

test('keys with the same model list share one compiled list, and changing one key leaves the others their list', async () => {
  const guard = await ClientKeyGuard.open({
    store: new MemoryClientKeyStore(),
    ledger: new LocalBudgetLedger(),
    clock: new FakeScheduler(T0),
  });
  const issue = (name: string, models: string[] | null) => {
    const { record, secret } = createRecord(CreateClientKeySchema.parse({ name, models }), T0);
    guard.apply(record);
    return { record, key: () => guard.identify(secret)! };
  };
  const a = issue('a', ['gpt-4o', 'claude-*']);
  const b = issue('b', ['gpt-4o', 'claude-*']);
  const c = issue('c', ['gpt-4o']);
  const open = issue('d', null);
  assert.equal(a.key().exactModels, b.key().exactModels, 'one Set for one list');
  assert.equal(a.key().globs, b.key().globs);
  assert.notEqual(a.key().exactModels, c.key().exactModels, 'another list is another Set');
  assert.equal(open.key().exactModels, undefined, 'no list: any model');
  const allowed = (key: ReturnType<typeof a.key>, model: string) => 'key' in (guard.admit(key, model) as object);
  assert.ok(allowed(b.key(), 'claude-sonnet-4'));
  assert.ok(!allowed(c.key(), 'claude-sonnet-4'));
  // a's list narrows to one model: b keeps both.
  guard.apply({ ...a.record, models: ['gpt-4o-mini'] });
  assert.ok(!allowed(a.key(), 'gpt-4o'), 'the changed key has its new list');
  assert.ok(allowed(a.key(), 'gpt-4o-mini'));
  assert.ok(allowed(b.key(), 'gpt-4o'), 'the key that shared the old list keeps it');
  assert.ok(allowed(b.key(), 'claude-3-haiku'));
  assert.ok(allowed(open.key(), 'anything-at-all'));
});
