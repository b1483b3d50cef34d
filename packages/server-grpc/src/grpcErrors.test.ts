// What an error message may repeat of a caller's value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { echoed } from './grpcErrors.js';

test('echoed quotes a short value whole and cuts a long one at 128 characters, never inside a surrogate pair', () => {
  assert.equal(echoed('job-1'), '"job-1"');
  assert.equal(echoed('a'.repeat(128)), JSON.stringify('a'.repeat(128)));
  assert.equal(echoed('a'.repeat(129)), JSON.stringify(`${'a'.repeat(128)}…`));
  // 127 ASCII characters then emoji (two UTF-16 units each): the 128th character is the first emoji, whole.
  assert.equal(echoed(`${'a'.repeat(127)}${'😀'.repeat(10)}`), JSON.stringify(`${'a'.repeat(127)}😀…`));
  assert.equal(echoed('"\n'), '"\\"\\n"', 'quoted and escaped as JSON');
});
