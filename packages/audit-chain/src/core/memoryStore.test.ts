import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runAuditStoreContract } from '../contract.js';
import { MemoryAuditStore } from './auditStore.js';
import type { AuditEntry, SealedEntry } from './entry.js';

runAuditStoreContract('MemoryAuditStore', async () => ({ store: new MemoryAuditStore() }));

test('MemoryAuditStore takes a batch of 150,000 entries in one append (a bulk import)', async () => {
  const store = new MemoryAuditStore();
  // The store checks only that the batch continues its head, so cheap stand-in hashes keep this test fast.
  const hashOf = (id: number) => id.toString(16).padStart(64, '0');
  const batch = (): SealedEntry[] =>
    Array.from({ length: 150_000 }, (_, i) => {
      const entry = { id: i + 1, timestamp: '2026-01-01T00:00:00Z', prev_hash: hashOf(i), hash: hashOf(i + 1) } as AuditEntry;
      return { entry, line: JSON.stringify(entry) };
    });
  const appended = await store.append(batch);
  assert.equal(appended.length, 150_000);
  assert.deepEqual(await store.head(), { size: 150_000, hash: hashOf(150_000) });
});
