import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ObservabilityError } from '../errors.js';
import { formatDuration, parseDuration, parseSize } from './units.js';

test('durations parse as the config writes them', () => {
  assert.equal(parseDuration('100ms'), 100);
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('5m'), 300_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('30d'), 2_592_000_000);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('250'), 250);
  assert.equal(parseDuration(42), 42);
});

test('bad durations are refused with the input quoted', () => {
  for (const bad of ['', '5', '5x', 'm5', '5 m', '-5s', '1h 30m', 's']) {
    if (bad === '5') continue; // a bare number is milliseconds
    assert.throws(
      () => parseDuration(bad),
      (e: unknown) => e instanceof ObservabilityError && e.code === 'invalid_argument',
      bad,
    );
  }
  assert.throws(() => parseDuration(-1), ObservabilityError);
  assert.throws(() => parseDuration(Number.NaN), ObservabilityError);
});

test('formatDuration and parseDuration round-trip (property)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 10 * 365 * 86_400_000 }), (ms) => {
      assert.equal(parseDuration(formatDuration(ms)), ms);
    }),
  );
});

test('sizes are binary, with or without B / iB', () => {
  assert.equal(parseSize('100M'), 100 * 1024 ** 2);
  assert.equal(parseSize('100MB'), 100 * 1024 ** 2);
  assert.equal(parseSize('100MiB'), 100 * 1024 ** 2);
  assert.equal(parseSize('512k'), 512 * 1024);
  assert.equal(parseSize('1G'), 1024 ** 3);
  assert.equal(parseSize('4096'), 4096);
  assert.equal(parseSize('10B'), 10);
  assert.equal(parseSize(2048), 2048);
  for (const bad of ['', 'M', '10Q', '-1M', '1.5.5M']) assert.throws(() => parseSize(bad), ObservabilityError, bad);
});
