/**
 * Thinking modes by model glob: the shipped table, a provider's overrides
 * first, and matching that stays linear on a hostile model name (the name
 * can be the client's).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { anthropicThinkingMode } from './thinkingModes.js';

test('the shipped table: adaptive for the models that take only adaptive thinking, budget for the rest', () => {
  assert.equal(anthropicThinkingMode('claude-opus-4-7'), 'adaptive');
  assert.equal(anthropicThinkingMode('us.anthropic.claude-sonnet-4-6-v1:0'), 'adaptive', 'a prefixed Bedrock id');
  assert.equal(anthropicThinkingMode('claude-sonnet-4-5'), 'budget');
  assert.equal(anthropicThinkingMode('claude-3-7-sonnet-latest'), 'budget');
});

test('overrides come first, with `?` for one character', () => {
  assert.equal(anthropicThinkingMode('claude-opus-4-7', { 'claude-opus-4-?': 'budget' }), 'budget');
  assert.equal(anthropicThinkingMode('my-claude-x', { 'my-claude-?': 'adaptive' }), 'adaptive');
  assert.equal(anthropicThinkingMode('my-claude-xy', { 'my-claude-?': 'adaptive' }), 'budget');
});

test('a hostile model name against a many-star glob is matched without backtracking', async () => {
  // As a regular expression, `^.*a.*a.*a.*a.*a.*b$` tries every way to place five `a`s in a name of
  // 20,000 of them before it fails: about 20,000^5 / 120 steps, a hung request. The glob places each
  // segment once, at its leftmost fit. The match runs in a worker, so that a matcher that backtracks
  // fails this test at the deadline instead of hanging the run (a blocked thread can only be ended
  // from outside).
  const worker = new Worker(
    `
    const { parentPort } = require('node:worker_threads');
    import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
      .then(({ tsImport }) => tsImport(${JSON.stringify(new URL('./thinkingModes.ts', import.meta.url).href)}, __filename))
      .then(({ anthropicThinkingMode }) => {
        const name = 'a'.repeat(20_000);
        const overrides = { '*a*a*a*a*a*b': 'adaptive' };
        parentPort.postMessage([anthropicThinkingMode(name, overrides), anthropicThinkingMode(name + 'b', overrides)]);
      });
    `,
    { eval: true },
  );
  try {
    const modes = await new Promise((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error('the match did not finish within 30 s: it backtracks')), 30_000);
      worker.once('message', (message) => {
        clearTimeout(deadline);
        resolve(message);
      });
      worker.once('error', reject);
    });
    assert.deepEqual(modes, ['budget', 'adaptive']);
  } finally {
    await worker.terminate();
  }
});
