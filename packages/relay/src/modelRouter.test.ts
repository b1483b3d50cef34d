import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModelRouter } from './modelRouter.js';

test('names no provider serves do not fill the router cache', () => {
  const router = new ModelRouter([{ name: 'g', kind: 'mock', models: ['gemini-*-flash*', 'exact-model'] }]);
  for (let i = 0; i < 5_000; i++) assert.deepEqual(router.route(`made-up-${i}`), []);
  assert.equal(router.cachedNames, 0);
  assert.deepEqual(router.route('gemini-2.5-flash'), [{ provider: 'g', upstreamModel: 'gemini-2.5-flash' }]);
  assert.deepEqual(router.route('exact-model'), [{ provider: 'g', upstreamModel: 'exact-model' }]);
  assert.equal(router.cachedNames, 2);
});
