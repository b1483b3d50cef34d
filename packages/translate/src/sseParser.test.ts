import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SseParser, sseEvent } from './sseParser.js';

test('events, names, multi-line data and comments; LF, CRLF and CR line ends', () => {
  for (const eol of ['\n', '\r\n', '\r']) {
    const text = [': comment', 'event: a', 'data: one', 'data: two', '', 'data:{"x":1}', 'id: 7', '', 'event: empty', ''].join(eol) + eol;
    const events = new SseParser().push(text);
    assert.deepEqual(
      events,
      [
        { event: 'a', data: 'one\ntwo' },
        { event: null, data: '{"x":1}' },
      ],
      JSON.stringify(eol),
    );
  }
});

test('an event missing its blank line at the end is dropped, never half-delivered', () => {
  const parser = new SseParser();
  assert.deepEqual(parser.push('data: whole\n\ndata: half'), [{ event: null, data: 'whole' }]);
  assert.ok(parser.pending > 0);
  assert.deepEqual(parser.end(), []);
});

test('a CR at a chunk boundary waits to see whether an LF follows', () => {
  const parser = new SseParser();
  assert.deepEqual(parser.push('data: a\r'), []);
  assert.deepEqual(parser.push('\n\r\n'), [{ event: null, data: 'a' }]);
});

test('property: however the bytes are split (even inside a UTF-8 character), the events are the same', () => {
  const payload = fc.array(
    fc.record({
      event: fc.option(fc.stringMatching(/^[a-z_.]{1,12}$/), { nil: undefined }),
      data: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((s) => !/[\r\n]/.test(s)),
    }),
    { maxLength: 8 },
  );
  fc.assert(
    fc.property(payload, fc.array(fc.nat(), { maxLength: 10 }), (events, cuts) => {
      const bytes = Buffer.from(events.map((e) => sseEvent(e.data, e.event)).join(''));
      const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((x, y) => x - y);
      const parser = new SseParser();
      const out = [];
      let at = 0;
      for (const point of [...points, bytes.length]) {
        out.push(...parser.push(bytes.subarray(at, point)));
        at = point;
      }
      out.push(...parser.end());
      assert.deepEqual(
        out,
        events.map((e) => ({ event: e.event ?? null, data: e.data })),
      );
    }),
  );
});

test('one event in many small chunks is parsed in time linear in its size', () => {
  const parser = new SseParser();
  const piece = 'a'.repeat(1024);
  const started = performance.now();
  assert.deepEqual(parser.push('data: '), []);
  // 8 Mi characters in 1 Ki pieces: searching everything held for a line end on every piece (as before) scanned 32 Gi.
  for (let i = 0; i < 8 * 1024; i++) parser.push(piece);
  const [event] = parser.push('\n\n');
  assert.equal(event?.data.length, 8 * 1024 * 1024);
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 3_000, `took ${Math.round(elapsed)} ms`);
});

test('an event that outgrows the limit without ending throws SSE_EVENT_TOO_LARGE, in one line or in many', () => {
  const endless = new SseParser({ maxEventLength: 100 });
  endless.push(`data: ${'x'.repeat(90)}`);
  assert.throws(() => endless.push('x'.repeat(20)), { code: 'SSE_EVENT_TOO_LARGE' });
  const manyLines = new SseParser({ maxEventLength: 100 });
  manyLines.push('data: 0123456789\n'.repeat(8));
  assert.throws(() => manyLines.push('data: 0123456789\n'.repeat(3)), { code: 'SSE_EVENT_TOO_LARGE' });
  const fits = new SseParser({ maxEventLength: 100 });
  fits.push('data: 0123456789\n'.repeat(8));
  assert.equal(fits.push('\n').length, 1);
});
