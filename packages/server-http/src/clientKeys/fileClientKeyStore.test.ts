/**
 * `auth-dir/.client-keys.json`: a file that cannot be read as client keys refuses the open (a
 * gateway would otherwise start with every key gone, revoked ones revived on restore); writes are
 * 0600 and carry budget use.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CreateClientKeySchema, createRecord } from './clientKeyRecord.js';
import { ClientKeysUnreadableError, FileClientKeyStore } from './fileClientKeyStore.js';

const dir = await mkdtemp(join(tmpdir(), 'client-key-file-'));
after(() => rm(dir, { recursive: true, force: true }));

test('a missing file is no keys; a written one is 0600 and reopens with its keys and budget use', async () => {
  const path = join(dir, 'keys.json');
  const store = await FileClientKeyStore.open(path);
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
