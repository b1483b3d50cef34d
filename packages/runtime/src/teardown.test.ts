import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Teardown } from './teardown.js';

test('steps run newest first, each once, and a failing one does not skip the rest', async () => {
  const undo = new Teardown();
  const ran: string[] = [];
  undo.push(() => ran.push('cluster'));
  undo.push(async () => {
    ran.push('outbound');
    throw new Error('close failed');
  });
  undo.push(async () => ran.push('credentials'));
  const failures = await undo.run();
  assert.deepEqual(ran, ['credentials', 'outbound', 'cluster']);
  assert.equal(failures.length, 1);
  assert.deepEqual(await undo.run(), [], 'a second run has nothing left to do');
  assert.deepEqual(ran, ['credentials', 'outbound', 'cluster']);
});
