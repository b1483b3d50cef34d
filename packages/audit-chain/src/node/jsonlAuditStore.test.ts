import assert from 'node:assert/strict';
import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runAuditStoreContract } from '../contract.js';
import { AuditLog, verifyFile } from '../index.js';
import { JsonlAuditStore } from './jsonlAuditStore.js';
import { repairJsonlFile } from './repair.js';

const dir = await mkdtemp(join(tmpdir(), 'audit-jsonl-'));
after(() => rm(dir, { recursive: true, force: true }));
let counter = 0;

for (const multiProcess of [false, true]) {
  runAuditStoreContract(`JsonlAuditStore (multiProcess: ${multiProcess})`, async () => {
    const path = join(dir, `contract-${counter++}.jsonl`);
    const opened: JsonlAuditStore[] = [await JsonlAuditStore.open(path, { multiProcess })];
    return {
      store: opened[0]!,
      reopen: async () => {
        await opened[0]!.close();
        const store = await JsonlAuditStore.open(path, { multiProcess });
        opened.push(store);
        return store;
      },
      close: async () => {
        for (const store of opened) await store.close();
      },
    };
  });
}

describe('JsonlAuditStore', () => {
  test('writes one canonical line per entry, each ending in a newline', async () => {
    const path = join(dir, 'lines.jsonl');
    const store = await JsonlAuditStore.open(path);
    const log = new AuditLog(store, { origin: 'o' });
    const entries = await log.appendMany([{ a: 1 }, { b: 'x' }]);
    await store.close();
    const text = await readFile(path, 'utf8');
    assert.equal(
      text,
      `${entries.map((e) => JSON.stringify(Object.fromEntries(Object.entries(e).sort(([a], [b]) => (a < b ? -1 : 1))))).join('\n')}\n`,
    );
    assert.equal((await verifyFile(path, { origin: 'o' })).valid, true);
  });

  test('group commit: many concurrent appends share few writes', async () => {
    const path = join(dir, 'batch.jsonl');
    const store = await JsonlAuditStore.open(path);
    const log = new AuditLog(store, { origin: 'o' });
    const handle = (store as unknown as { handle: { datasync: () => Promise<void> } }).handle;
    let syncs = 0;
    const original = handle.datasync.bind(handle);
    handle.datasync = async () => {
      syncs++;
      return original();
    };
    await Promise.all(Array.from({ length: 500 }, (_, i) => log.append({ i })));
    await store.close();
    assert.ok(syncs < 50, `expected batched fsyncs, got ${syncs} for 500 appends`);
    assert.equal((await verifyFile(path, { origin: 'o' })).entries_verified, 500);
  });

  test('opening a file with a torn last line fails with TORN_TAIL and a fix', async () => {
    const path = join(dir, 'torn.jsonl');
    const store = await JsonlAuditStore.open(path);
    await new AuditLog(store, { origin: 'o' }).append({ a: 1 });
    await store.close();
    await writeFile(path, '{"a":2,"hash', { flag: 'a' });
    await assert.rejects(JsonlAuditStore.open(path), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'TORN_TAIL');
      assert.match(error.message, /audit-chain repair/);
      return true;
    });
  });

  test('appending after close is refused', async () => {
    const store = await JsonlAuditStore.open(join(dir, 'closed.jsonl'));
    await store.close();
    await assert.rejects(new AuditLog(store, { origin: 'o' }).append({}), /closed/);
  });

  test('a failed write poisons the store until it is reopened', async () => {
    const path = join(dir, 'poison.jsonl');
    const store = await JsonlAuditStore.open(path);
    const log = new AuditLog(store, { origin: 'o' });
    await log.append({ ok: true });
    const handle = (store as unknown as { handle: { write: () => Promise<never> } }).handle;
    handle.write = async () => {
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    };
    await assert.rejects(log.append({ ok: false }), /ENOSPC/);
    await assert.rejects(log.append({ ok: false }), /reopen/);
    await store.close().catch(() => undefined);
    const reopened = await JsonlAuditStore.open(path);
    assert.deepEqual((await reopened.head()).size, 1);
    await reopened.close();
  });
});

test('openFile: the store and repair open the log through it, and a refusing opener leaves no lock behind', async () => {
  const path = join(dir, 'opener.jsonl');
  const opened: string[] = [];
  const store = await JsonlAuditStore.open(path, {
    multiProcess: true,
    openFile: (file) => {
      opened.push(file);
      return open(file, 'a+', 0o600);
    },
  });
  await new AuditLog(store, { origin: 'o' }).append({ a: 1 });
  await store.close();
  assert.deepEqual(opened, [path]);
  assert.equal((await stat(path)).mode & 0o777, 0o600, 'the file the opener made is the log');

  const refused = new Error('refused by the opener');
  await assert.rejects(repairJsonlFile(path, { openFile: () => Promise.reject(refused) }), refused);
  await assert.rejects(stat(`${path}.lock`), { code: 'ENOENT' }, 'the lock is released');
  assert.equal((await repairJsonlFile(path, { openFile: (file) => open(file, 'r+') })).action, 'none');
});
