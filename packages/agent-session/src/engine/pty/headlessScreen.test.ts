// The headless screen's text: soft-wrapped rows joined back into the line the program wrote.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { HeadlessScreen } from './headlessScreen.js';

const WIDE = '日本語テキスト';

test('a wide character that did not fit at the end of a row leaves no space in the joined line', async () => {
  const screen = await HeadlessScreen.create({ cols: 10, rows: 6 });
  try {
    // One column of ASCII puts every wide character on an odd column: each row ends in a cell left empty.
    const line = `x${WIDE.repeat(3)}`;
    await screen.write(`${line}\r\nabcdefghi jklm\r\n${line}`);
    assert.equal(screen.lines()[0], line);
    assert.equal(screen.lines()[1], 'abcdefghi jklm', 'a space the program wrote at the end of a row is text');
    assert.equal(screen.cursorLine(), line, 'the prompt-side reading joins the same way');
  } finally {
    screen.dispose();
  }
});

test('property: a line written past the edge reads back as written (ASCII, spaces, accents and wide characters)', async () => {
  const chars = fc.constantFrom('a', 'b', 'z', '1', ' ', '.', 'é', '日', '本', 'テ');
  await fc.assert(
    fc.asyncProperty(fc.array(chars, { minLength: 1, maxLength: 40 }), async (parts) => {
      const line = parts.join('');
      const screen = await HeadlessScreen.create({ cols: 7, rows: 4, scrollback: 50 });
      try {
        await screen.write(`${line}\r\n`);
        // Trailing spaces are no concern here (replies are trimmed); spaces inside the line are.
        assert.equal(screen.lines()[0]?.trimEnd(), line.trimEnd());
      } finally {
        screen.dispose();
      }
    }),
    { numRuns: 200 },
  );
});
