import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { sampleCredential } from '../contract.js';
import type { Credential } from '../credential.js';
import type { StoreChange, Unsubscribe } from '../store/credentialStore.js';
import { MemoryCredentialStore } from '../store/memoryCredentialStore.js';
import { MemoryQuotaStore } from '../store/quotaStore.js';
import { CredentialManager } from './credentialManager.js';

/**
 * A store where another writer lands changes while the manager is listing:
 * after the snapshot is taken and before it is returned, like a database
 * read that another node's commit races.
 */
class RacingStore extends MemoryCredentialStore {
  during: (() => Promise<void>) | undefined;
  override async list(): Promise<Credential[]> {
    const snapshot = await super.list();
    const race = this.during;
    this.during = undefined;
    await race?.();
    return snapshot;
  }
}

test('changes that land while the manager lists the store at start are applied, not missed', async () => {
  const store = new RacingStore();
  await store.put(sampleCredential('kept', { provider: 'openai' }));
  await store.put(sampleCredential('doomed', { provider: 'openai' }));
  store.during = async () => {
    await store.put(sampleCredential('added-meanwhile', { provider: 'openai' }));
    await store.delete('doomed');
    await store.put(sampleCredential('kept', { provider: 'openai', priority: 7 }));
  };
  const manager = new CredentialManager({ store, quotaStore: new MemoryQuotaStore() });
  await manager.start();
  try {
    await eventually('the changes made during the listing', () => {
      const ids = manager.list('openai').map((r) => r.id);
      return ids.includes('added-meanwhile') && !ids.includes('doomed') && manager.describe('kept').priority === 7;
    });
    assert.deepEqual(
      manager
        .list('openai')
        .map((r) => r.id)
        .sort(),
      ['added-meanwhile', 'kept'],
    );
  } finally {
    await manager.close();
  }
});

/** A store whose first list() fails (the database is down at start), and that counts its watchers. */
class FailingListStore extends MemoryCredentialStore {
  failures = 1;
  watchers = 0;
  override watch(listener: (change: StoreChange) => void): Unsubscribe {
    this.watchers++;
    const unsubscribe = super.watch(listener);
    return () => {
      this.watchers--;
      unsubscribe();
    };
  }
  override async list(): Promise<Credential[]> {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('the database is down');
    }
    return super.list();
  }
}

test('a start whose listing fails leaves no watch behind, and start() can be called again', async () => {
  const store = new FailingListStore();
  await store.put(sampleCredential('one', { provider: 'openai' }));
  const manager = new CredentialManager({ store, quotaStore: new MemoryQuotaStore() });
  await assert.rejects(manager.start(), /the database is down/);
  assert.equal(store.watchers, 0, 'the early watch was dropped');
  await store.put(sampleCredential('two', { provider: 'openai' }));
  await manager.start();
  try {
    assert.equal(store.watchers, 1);
    assert.deepEqual(
      manager
        .list('openai')
        .map((r) => r.id)
        .sort(),
      ['one', 'two'],
    );
  } finally {
    await manager.close();
  }
  assert.equal(store.watchers, 0);
});
