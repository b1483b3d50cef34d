import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { abortableSleep } from './abortableSleep.js';

test('waits leave no abort listener behind on a long-lived signal', async () => {
  const controller = new AbortController();
  for (let round = 0; round < 20; round++) await abortableSleep(1, controller.signal);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
});

test('an abort cuts the wait short with the signal’s reason; an aborted signal rejects at once', async () => {
  const controller = new AbortController();
  const waiting = abortableSleep(60_000, controller.signal);
  controller.abort(new Error('cancelled'));
  await assert.rejects(waiting, /cancelled/);
  const started = Date.now();
  await assert.rejects(abortableSleep(60_000, controller.signal), /cancelled/);
  assert.ok(Date.now() - started < 1000);
});
