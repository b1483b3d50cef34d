import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type AuthUpdate, AuthUpdateQueue } from './authUpdateQueue.js';

const upsert = (id: string, revision: number): AuthUpdate => ({ type: 'auth.upsert', id, revision, source: 'file' });

describe('AuthUpdateQueue', () => {
  test('below capacity it is a plain FIFO', () => {
    const queue = new AuthUpdateQueue({ capacity: 4 });
    for (let i = 1; i <= 3; i++) queue.push(upsert('a', i));
    assert.deepEqual(
      [queue.shift(), queue.shift(), queue.shift()].map((item) => (item!.update as { revision: number }).revision),
      [1, 2, 3],
    );
    assert.equal(queue.shift(), undefined);
    assert.deepEqual(queue.stats(), { capacity: 4, depth: 0, overflow: 0, enqueued: 3, coalesced: 0, delivered: 3, max_depth: 3 });
  });

  test('when full, updates coalesce per credential, keep per-credential order, and every waiter is answered', async () => {
    const queue = new AuthUpdateQueue({ capacity: 2 });
    const events: string[] = [];
    queue.events.on('full', () => events.push('full'));
    queue.events.on('drained', () => events.push('drained'));
    const answered: string[] = [];
    const push = (id: string, revision: number) =>
      queue.push(upsert(id, revision), (_error, applied) => answered.push(`${id}@${revision}:${applied?.revision}`));
    push('a', 1);
    push('b', 1);
    push('a', 2); // overflow
    push('c', 1); // overflow
    push('a', 3); // replaces a@2
    push('a', 4); // replaces a@3
    assert.equal(queue.depth, 2);
    assert.deepEqual(queue.stats().overflow, 2);
    assert.equal(queue.stats().coalesced, 2);
    const delivered: string[] = [];
    for (let item = queue.shift(); item; item = queue.shift()) {
      const u = item.update as { id: string; revision: number };
      delivered.push(`${u.id}@${u.revision}`);
      item.settle(undefined, { revision: u.revision * 10 });
    }
    assert.deepEqual(delivered, ['a@1', 'b@1', 'a@4', 'c@1']);
    // Waiters of a replaced update learn what the newer one that replaced it came to.
    assert.deepEqual(answered.sort(), ['a@1:10', 'a@2:40', 'a@3:40', 'a@4:40', 'b@1:10', 'c@1:10']);
    assert.deepEqual(events, ['full', 'drained']);
  });

  test('a delete after an upsert of the same credential wins, and an upsert after a delete wins', () => {
    const queue = new AuthUpdateQueue({ capacity: 1 });
    queue.push({ type: 'config.reload', path: '/etc/config.yaml', source: 'config' });
    queue.push(upsert('x', 1));
    queue.push({ type: 'auth.delete', id: 'x', source: 'runtime' });
    queue.push({ type: 'auth.delete', id: 'y', source: 'runtime' });
    queue.push(upsert('y', 2));
    queue.push({ type: 'config.reload', path: '/etc/config.yaml', source: 'config' });
    const out: string[] = [];
    for (let item = queue.shift(); item; item = queue.shift()) {
      const u = item.update;
      out.push(u.type === 'config.reload' ? u.type : `${u.type} ${u.id}`);
    }
    assert.deepEqual(out, ['config.reload', 'auth.delete x', 'auth.upsert y', 'config.reload']);
  });

  test('property: whatever the interleaving, the last update of every credential is delivered, in order, within capacity', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.oneof(fc.record({ push: fc.integer({ min: 0, max: 5 }) }), fc.record({ take: fc.integer({ min: 1, max: 4 }) })), {
          maxLength: 200,
        }),
        (capacity, steps) => {
          const queue = new AuthUpdateQueue({ capacity });
          const lastPushed = new Map<string, number>();
          const lastApplied = new Map<string, number>();
          let revision = 0;
          const take = () => {
            const item = queue.shift();
            if (!item) return false;
            const u = item.update as { id: string; revision: number };
            assert.ok(u.revision > (lastApplied.get(u.id) ?? 0), 'per-credential order holds');
            lastApplied.set(u.id, u.revision);
            item.settle();
            return true;
          };
          for (const step of steps) {
            if ('push' in step) {
              const id = `k${step.push}`;
              lastPushed.set(id, ++revision);
              queue.push(upsert(id, revision));
            } else for (let i = 0; i < step.take; i++) take();
            assert.ok(queue.depth <= capacity);
          }
          while (take());
          assert.deepEqual(lastApplied, lastPushed);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('a burst of 10,000 updates against a slow consumer loses nothing and stays within 256', async () => {
    const queue = new AuthUpdateQueue();
    const expected = new Map<string, number>();
    const applied = new Map<string, number>();
    let acknowledged = 0;
    const consumer = (async () => {
      for await (const item of queue) {
        const u = item.update as { id: string; revision: number };
        applied.set(u.id, u.revision);
        item.settle();
        if (applied.size % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    for (let i = 1; i <= 10_000; i++) {
      const id = `openai-${i % 1500}`;
      expected.set(id, i);
      queue.push(upsert(id, i), () => acknowledged++);
      assert.ok(queue.depth <= 256);
    }
    queue.close();
    await consumer;
    assert.deepEqual(applied, expected);
    assert.equal(acknowledged, 10_000, 'every producer heard back');
    const stats = queue.stats();
    assert.ok(stats.coalesced > 0, 'the burst coalesced');
    assert.equal(stats.max_depth, 256);
    assert.equal(stats.delivered + stats.coalesced, 10_000);
  });

  test('after close, producers are told and the consumer ends once drained', async () => {
    const queue = new AuthUpdateQueue();
    queue.push(upsert('a', 1));
    queue.close();
    let error: unknown;
    queue.push(upsert('b', 1), (e) => (error = e));
    assert.match(String(error), /closed/);
    assert.equal((await queue.next())?.update.type, 'auth.upsert');
    assert.equal(await queue.next(), undefined);
    assert.throws(() => new AuthUpdateQueue({ capacity: 0 }), /capacity/);
  });
});
