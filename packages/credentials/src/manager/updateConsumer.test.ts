import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import type { Credential } from '../credential.js';
import { AuthUpdateQueue } from '../queue/authUpdateQueue.js';
import type { CredentialWriter } from './credentialWriter.js';
import { UpdateConsumer } from './updateConsumer.js';

/**
 * An update consumer over a store that `stored` stands for and pools that `held` stands for. Each read of the
 * store (the writer's `sync`) waits for `release()` when `hold` is set, so a test can act while a read is in flight.
 */
function consumerOver(stored: Map<string, Credential>) {
  const held = new Map<string, Credential>();
  const queue = new AuthUpdateQueue();
  const reads: string[] = [];
  let release: (() => void) | undefined;
  let hold = false;
  const writer = {
    isWriting: () => false,
    async sync(id: string) {
      reads.push(id);
      const record = stored.get(id);
      if (hold) await new Promise<void>((resolve) => (release = resolve));
      if (record) held.set(id, record);
      else held.delete(id);
    },
  } as unknown as CredentialWriter;
  const consumer = new UpdateConsumer({
    queue,
    writer,
    held: (id) => held.get(id),
    removed: (id) => held.delete(id),
    forgotten: () => undefined,
    configReloaded: () => undefined,
    applied: () => undefined,
  });
  const running = consumer.run();
  return {
    consumer,
    held,
    reads,
    holdReads: () => (hold = true),
    release: () => {
      hold = false;
      release?.();
    },
    stop: async () => {
      queue.close();
      await running;
    },
  };
}

const credential = (id: string, revision: number) => ({ id, provider: 'acme', revision }) as unknown as Credential;

describe('UpdateConsumer', () => {
  test('a delete notified while the upsert before it is still reading the store is not dropped', async () => {
    const stored = new Map([['c1', credential('c1', 1)]]);
    const { consumer, held, reads, holdReads, release, stop } = consumerOver(stored);
    try {
      holdReads();
      // Another node creates c1: the consumer reads it from the store (the read is in flight, the pools do not hold it yet) ...
      consumer.onStoreChange({ type: 'auth.upsert', id: 'c1', revision: 1, origin: 'external' });
      await eventually('the upsert to read the store', () => reads.length === 1);
      // ... and deletes it at once.
      stored.delete('c1');
      consumer.onStoreChange({ type: 'auth.delete', id: 'c1', revision: 2, origin: 'external' });
      // The read brings the (now stale) credential into the pools; the delete must take it out again.
      release();
      await eventually('the delete to be applied', () => reads.length === 2);
      await eventually('c1 to leave the pools', () => !held.has('c1'));
    } finally {
      await stop();
    }
  });

  test('a delete of a credential the pools never held, with nothing of it on its way in, is not queued', async () => {
    const { consumer, reads, stop } = consumerOver(new Map());
    try {
      consumer.onStoreChange({ type: 'auth.delete', id: 'never', revision: 3, origin: 'external' });
      // An upsert of another credential, queued after it, is applied: had the delete been queued, it would have been read first.
      consumer.onStoreChange({ type: 'auth.upsert', id: 'other', revision: 1, origin: 'external' });
      await eventually('the upsert to be applied', () => reads.includes('other'));
      assert.deepEqual(reads, ['other']);
    } finally {
      await stop();
    }
  });

  test('an upsert the pools already hold at that revision is not queued', async () => {
    const stored = new Map([['c2', credential('c2', 4)]]);
    const { consumer, held, reads, stop } = consumerOver(stored);
    try {
      consumer.onStoreChange({ type: 'auth.upsert', id: 'c2', revision: 4, origin: 'external' });
      await eventually('c2 to be held', () => held.has('c2'));
      consumer.onStoreChange({ type: 'auth.upsert', id: 'c2', revision: 4, origin: 'external' });
      consumer.onStoreChange({ type: 'auth.upsert', id: 'marker', revision: 1, origin: 'external' });
      await eventually('the marker to be read', () => reads.includes('marker'));
      assert.deepEqual(reads, ['c2', 'marker']);
    } finally {
      await stop();
    }
  });
});
