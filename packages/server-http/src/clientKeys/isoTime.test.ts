import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IsoTimes } from './isoTime.js';

test('formats every millisecond as toISOString does, across seconds, days, years and back in time', () => {
  const times = new IsoTimes();
  const starts = [
    0,
    Date.UTC(2026, 10, 28, 23, 59, 58, 990),
    Date.UTC(1999, 11, 31, 23, 59, 59),
    Date.UTC(2024, 1, 29),
    -1_500,
    253_402_300_799_000,
  ];
  for (const start of starts) {
    for (let ms = start; ms < start + 2_100; ms += 7) assert.equal(times.format(ms), new Date(ms).toISOString(), String(ms));
  }
  // Out of order: a cached second never leaks into another.
  for (const ms of [5_000, 4_999, 5_001, 1_000_123, 5_002]) assert.equal(times.format(ms), new Date(ms).toISOString());
});
