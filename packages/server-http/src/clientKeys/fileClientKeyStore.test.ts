/**
 * `auth-dir/.client-keys.json`: a file that cannot be read as client keys refuses the open (a
 * gateway would otherwise start with every key gone, revoked ones revived on restore); writes are
 * 0600 and carry budget use; last-used times alone rewrite the key file only every few minutes, while
 * budget use goes to its small file at each flush.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CreateClientKeySchema, createRecord } from './clientKeyRecord.js';
import { LocalBudgetLedger } from './clientKeyStore.js';
import { budgetFileOf, ClientKeysUnreadableError, FileClientKeyStore } from './fileClientKeyStore.js';

const dir = await mkdtemp(join(tmpdir(), 'client-key-file-'));
after(() => rm(dir, { recursive: true, force: true }));

test('a missing file is no keys; a written one is 0600 and reopens with its keys and budget use', async () => {
  const path = join(dir, 'keys.json');
  const store = await FileClientKeyStore.open(path, { lastUsedWriteIntervalMs: 0 });
  assert.deepEqual(await store.load(), []);
  const { record } = createRecord(CreateClientKeySchema.parse({ name: 'a', budget: { limit: 5, unit: 'requests', period: 'daily' } }), 0);
  await store.put(record);
  const reservation = { keyId: record.id, reservation: '', period: '1970-01-01', units: 1, limit: 5 };
  store.ledger.reserve(reservation);
  store.ledger.settle(reservation, 1);
  await store.recordLastUsed(new Map([[record.id, '1970-01-01T00:00:01.000Z']]));
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  const reopened = await FileClientKeyStore.open(path);
  assert.equal((await reopened.load())[0]?.last_used_at, '1970-01-01T00:00:01.000Z');
  assert.equal(reopened.ledger.used(record.id, '1970-01-01'), 1);
});

test('garbage, another shape or a symlink refuses the open, naming the file', async () => {
  const garbage = join(dir, 'garbage.json');
  await writeFile(garbage, 'not json');
  await assert.rejects(FileClientKeyStore.open(garbage), (error: unknown) => {
    assert.ok(error instanceof ClientKeysUnreadableError);
    assert.match(error.message, /garbage\.json \(it is not a client-keys file\)/);
    return true;
  });
  const shape = join(dir, 'shape.json');
  await writeFile(shape, JSON.stringify({ format_version: 1, keys: [{ id: 'x' }], budget_use: {} }));
  await assert.rejects(FileClientKeyStore.open(shape), ClientKeysUnreadableError);
  const link = join(dir, 'link.json');
  await symlink(shape, link);
  await assert.rejects(FileClientKeyStore.open(link), /it is not a regular file/);
});

test('last-used times alone rewrite the key file only every few minutes; budget use goes to its own file at each flush', async () => {
  const path = join(dir, 'busy.json');
  let now = Date.UTC(2026, 10, 28, 12);
  const clock = { now: () => now };
  const store = await FileClientKeyStore.open(path, { clock, lastUsedWriteIntervalMs: 300_000 });
  const { record } = createRecord(
    CreateClientKeySchema.parse({ name: 'busy', budget: { limit: 100, unit: 'requests', period: 'daily' } }),
    now,
  );
  await store.put(record);
  const keyFile = await readFile(path, 'utf8');
  const spend = (at: number) => {
    const reservation = { keyId: record.id, reservation: '', period: '2026-11-28', units: 1, limit: 100 };
    store.ledger.reserve(reservation);
    store.ledger.settle(reservation, 1);
    return store.recordLastUsed(new Map([[record.id, new Date(at).toISOString()]]));
  };
  now += 10_000;
  await spend(now);
  assert.equal(await readFile(path, 'utf8'), keyFile, 'a flush of last-used times leaves the key file alone');
  assert.equal(store.budgetPath, join(dir, 'busy.budgets.json'));
  assert.equal((await stat(store.budgetPath)).mode & 0o777, 0o600);
  // A crash here: the budget file has the spend, the key file the older last-used time.
  const afterCrash = await FileClientKeyStore.open(path);
  assert.equal(afterCrash.ledger.used(record.id, '2026-11-28'), 1);
  assert.equal((await afterCrash.load())[0]?.last_used_at, null);
  now += 300_000;
  await spend(now);
  assert.equal(
    (await FileClientKeyStore.open(path).then((s) => s.load()))[0]?.last_used_at,
    new Date(now).toISOString(),
    'due after 5 minutes',
  );
  now += 1_000;
  await spend(now);
  await store.close();
  const reopened = await FileClientKeyStore.open(path);
  assert.equal((await reopened.load())[0]?.last_used_at, new Date(now).toISOString(), 'close writes what is pending');
  assert.equal(reopened.ledger.used(record.id, '2026-11-28'), 3);
});

test('of the two files, a period’s larger use wins, and a later period over an earlier one', async () => {
  const path = join(dir, 'merge.json');
  const { record: a } = createRecord(CreateClientKeySchema.parse({ name: 'a' }), 0);
  const { record: b } = createRecord(CreateClientKeySchema.parse({ name: 'b' }), 0);
  await writeFile(
    path,
    JSON.stringify({
      format_version: 1,
      keys: [a, b],
      budget_use: { [a.id]: { period: '2026-11-27', used: 50 }, [b.id]: { period: '2026-11-28', used: 9 } },
    }),
  );
  await writeFile(
    budgetFileOf(path),
    JSON.stringify({
      format_version: 1,
      budget_use: { [a.id]: { period: '2026-11-28', used: 2 }, [b.id]: { period: '2026-11-28', used: 4 } },
    }),
  );
  const store = await FileClientKeyStore.open(path);
  assert.equal(store.ledger.used(a.id, '2026-11-28'), 2);
  assert.equal(store.ledger.used(b.id, '2026-11-28'), 9);
  await writeFile(budgetFileOf(path), 'not json');
  await assert.rejects(FileClientKeyStore.open(path), /merge\.budgets\.json \(it is not a client-key budget file\)/);
});

test('the ledger’s JSON text is its snapshot’s, through changes, new periods, restores and ids that need escaping', () => {
  const ledger = new LocalBudgetLedger();
  const same = () => assert.deepEqual(JSON.parse(ledger.snapshotJson()), ledger.snapshot());
  const exact = () => assert.equal(ledger.snapshotJson(), JSON.stringify(ledger.snapshot()));
  exact();
  const take = (keyId: string, period: string, used: number) => {
    const reservation = { keyId, reservation: '', period, units: 1, limit: 1e9 };
    assert.equal(ledger.reserve(reservation).admitted, true);
    ledger.settle(reservation, used);
  };
  take('ck_a', '2026-11-28', 5);
  take('odd "id"\n\u2028', '2026-11-28', 0.25);
  exact();
  take('ck_a', '2026-11-28', 7);
  exact();
  assert.equal(JSON.parse(ledger.snapshotJson()).ck_a.used, 12);
  take('ck_a', '2026-11-29', 1);
  exact();
  take('ck_b', '2026-11-29', 0);
  ledger.restore({ ck_c: { period: '2026-11', used: 3 }, ck_a: { period: '2026-11-29', used: 40 } });
  exact();
  same();
  assert.equal(JSON.parse(ledger.snapshotJson()).ck_a.used, 40);
});

test('a request admitted in one period and settled in the next counts in neither the new period nor its reservations', () => {
  const ledger = new LocalBudgetLedger();
  const before = { keyId: 'k1', reservation: 'r1', period: '2026-11-27', units: 1, limit: 10 };
  assert.equal(ledger.reserve(before).admitted, true);
  // Midnight: the next request opens the new period before the first one ends.
  const after = { keyId: 'k1', reservation: 'r2', period: '2026-11-28', units: 1, limit: 10 };
  assert.equal(ledger.reserve(after).admitted, true);
  ledger.settle(before, 7);
  assert.equal(ledger.used('k1', '2026-11-28'), 0, 'the old period’s use is not the new one’s');
  ledger.settle(after, 2);
  assert.equal(ledger.used('k1', '2026-11-28'), 2);
  // And the old reservation did not eat into the new period's: eight more units fit (10 - 2 used, nothing reserved).
  for (let i = 0; i < 8; i++) assert.equal(ledger.reserve({ ...after, reservation: `r${3 + i}` }).admitted, true);
  assert.equal(ledger.reserve({ ...after, reservation: 'r-over' }).admitted, false);
});

test('a reservation object reused for every request of a key counts in the key’s entry, through a restore and a new period', () => {
  const ledger = new LocalBudgetLedger();
  // The guard hands every request of a key in one period the same reservation (a local ledger needs no ids).
  const today = { keyId: 'k1', reservation: '', period: '2026-11-28', units: 1, limit: 10 };
  const use = (reservation: typeof today, units: number) => {
    const admitted = ledger.reserve(reservation).admitted;
    if (admitted) ledger.settle(reservation, units);
    return admitted;
  };
  assert.ok(use(today, 3));
  assert.ok(use(today, 2));
  assert.equal(ledger.used('k1', '2026-11-28'), 5);
  // A restore brings a larger count of the same period (the budget file written by an earlier run): it is what counts.
  ledger.restore({ k1: { period: '2026-11-28', used: 8 } });
  assert.ok(use(today, 1));
  assert.equal(ledger.used('k1', '2026-11-28'), 9, 'counted in the restored entry, not the one it replaced');
  assert.ok(use(today, 1));
  assert.equal(use(today, 1), false, 'the limit of 10 holds on the restored count');
  // Midnight: another reservation opens the next period; the old one, still in flight, settles into nothing.
  assert.equal(ledger.reserve(today).admitted, false);
  const tomorrow = { ...today, period: '2026-11-29' };
  assert.ok(use(tomorrow, 4));
  ledger.settle(today, 5);
  assert.equal(ledger.used('k1', '2026-11-29'), 4, 'the old period’s request does not count in the new one');
  assert.ok(use(tomorrow, 1));
  assert.equal(ledger.used('k1', '2026-11-29'), 5);
  assert.equal(ledger.snapshot().k1?.used, 5);
});
