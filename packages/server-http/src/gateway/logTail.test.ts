import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LogTail } from './logTail.js';

test('keeps the last lines in order across any chunking, and forwards every byte', () => {
  fc.assert(
    fc.property(fc.array(fc.stringMatching(/^[a-z0-9 ]{1,12}$/), { maxLength: 60 }), fc.integer({ min: 1, max: 9 }), (lines, cut) => {
      const written: string[] = [];
      const tail = new LogTail({ write: (chunk: string) => written.push(chunk) }, 10);
      const text = lines.map((l) => `${l}\n`).join('');
      for (let i = 0; i < text.length; i += cut) tail.write(text.slice(i, i + cut));
      assert.equal(written.join(''), text);
      assert.deepEqual(tail.last(10), lines.slice(-10));
      assert.deepEqual(tail.last(3), lines.slice(-3));
    }),
  );
});

test('lines written whole and lines written in pieces, mixed, are kept in order', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.stringMatching(/^[a-z0-9 ]{1,12}$/), fc.integer({ min: 0, max: 13 })), { maxLength: 60 }), (lines) => {
      const written: string[] = [];
      const tail = new LogTail({ write: (chunk: string) => written.push(chunk) }, 10);
      // A cut of 0 writes the line whole (the logger's way); any other cut writes it in two pieces.
      for (const [line, cut] of lines) {
        const text = `${line}\n`;
        if (cut === 0 || cut >= text.length) tail.write(text);
        else {
          tail.write(text.slice(0, cut));
          tail.write(text.slice(cut));
        }
      }
      assert.equal(written.join(''), lines.map(([l]) => `${l}\n`).join(''));
      assert.deepEqual(
        tail.last(10),
        lines.slice(-10).map(([l]) => l),
      );
    }),
  );
});

test('followers see each new line until they stop', () => {
  const tail = new LogTail(undefined);
  const seen: string[] = [];
  const stop = tail.follow((line) => seen.push(line));
  tail.write('a\nb');
  tail.write('\nc\n');
  stop();
  tail.write('d\n');
  assert.deepEqual(seen, ['a', 'b', 'c']);
  assert.equal(tail.followerCount, 0);
});
