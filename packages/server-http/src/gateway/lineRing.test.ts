import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LineRing } from './lineRing.js';

/** The last lines a ring of `maxLines` and `maxBytes` must return: the newest lines that fit, whole. */
test('returns the newest lines, whole and in order, through wrap-arounds, multi-byte characters and the count limit', () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', ' ', '"'), maxLength: 40 }), { maxLength: 300 }),
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 120, max: 600 }),
      (lines, maxLines, maxBytes) => {
        const ring = new LineRing(maxLines, maxBytes);
        for (const line of lines) ring.push(line);
        const kept = ring.last(maxLines);
        // Never more than maxLines, always the newest ones in order, each exactly as written.
        assert.ok(kept.length <= maxLines);
        assert.deepEqual(kept, lines.slice(lines.length - kept.length));
        // The byte budget is what limits it, never anything else: the newest line is always there, and
        // when fewer than maxLines are kept, one more older line would not have fitted beside them.
        if (lines.length > 0) assert.equal(kept.at(-1), lines.at(-1));
        if (kept.length < Math.min(maxLines, lines.length)) {
          const bytes = [...kept, lines[lines.length - kept.length - 1]!].reduce((n, l) => n + Buffer.byteLength(l), 0);
          assert.ok(bytes + 3 * 40 > maxBytes / 2, `only ${kept.length} lines kept with ${bytes} bytes`);
        }
        assert.deepEqual(ring.last(2), kept.slice(-2));
      },
    ),
  );
});

test('a line longer than a third of the buffer keeps its beginning', () => {
  const ring = new LineRing(4, 300);
  ring.push('x'.repeat(500));
  ring.push('short');
  assert.deepEqual(ring.last(4), ['x'.repeat(99), 'short']);
});

test('5,000 request-sized lines: all 5,000 kept with the default budget', () => {
  const ring = new LineRing(5_000);
  const line = (i: number) =>
    `{"level":"info","time":"2026-11-28T07:00:00.000Z","request_id":"${i}","model":"gpt-4o","status":200,"latency_ms":12.5}`;
  for (let i = 0; i < 12_000; i++) ring.push(line(i));
  const kept = ring.last(10_000);
  assert.equal(kept.length, 5_000);
  assert.equal(kept[0], line(7_000));
  assert.equal(kept.at(-1), line(11_999));
});
