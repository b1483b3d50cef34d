import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { newSection, stripEcho, trimBlankLines } from './text.js';

const word = fc.stringMatching(/^[a-z0-9(){}=+*_.,:'"-]{1,12}$/);
const line = fc.array(word, { minLength: 1, maxLength: 6 }).map((words) => words.join(' '));
// Echo matching skips punctuation in the text (prompts, borders), so its guarantee is for
// input lines that hold at least one word character; a line of pure punctuation can be
// taken for chrome.
const inputLine = line.filter((text) => /[a-z0-9]/.test(text));
const prompts = fc.constantFrom('>>> ', '$ ', 'bash-5.2# ', 'user@host:~/src$ ', '> ', '│ > ', '');

describe('stripEcho', () => {
  test('removes a one-line echo behind a prompt', () => {
    assert.equal(stripEcho('>>> print(1 + 1)\n2\n>>> ', 'print(1 + 1)'), '2\n>>> ');
  });

  test('removes a multi-line echo with continuation prompts between its lines', () => {
    const screen = '>>> for i in range(2):\n...     print(i)\n... \n0\n1\n>>> ';
    assert.equal(stripEcho(screen, 'for i in range(2):\n    print(i)\n'), '... \n0\n1\n>>> ');
  });

  test('removes an echo the terminal wrapped over several rows', () => {
    const input = `${'a'.repeat(30)} ${'b'.repeat(30)}`;
    const wrapped = `$ ${'a'.repeat(30)} ${'b'.repeat(10)}\n${'b'.repeat(20)}\noutput`;
    assert.equal(stripEcho(wrapped, input), 'output');
  });

  test('leaves the text alone when the echo is not near the top', () => {
    const text = 'first line\nsecond line\nthird line\nfourth line\nfifth line\nsixth line\nseventh line\n> hello';
    assert.equal(stripEcho(text, 'hello'), text);
    assert.equal(stripEcho('no echo here', 'completely different'), 'no echo here');
    assert.equal(stripEcho('anything', '   '), 'anything');
  });

  test('property: prompt + echoed input + output gives back exactly the output', () => {
    fc.assert(
      fc.property(
        prompts,
        fc.array(inputLine, { minLength: 1, maxLength: 4 }),
        fc.array(line, { minLength: 1, maxLength: 5 }),
        (prompt, input, output) => {
          const screen = [`${prompt}${input[0]}`, ...input.slice(1).map((l) => `... ${l}`), ...output].join('\n');
          assert.equal(stripEcho(screen, input.join('\n')), output.join('\n'));
        },
      ),
    );
  });

  test('property: never adds text, and only ever removes whole lines from the top', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), line, (lines, input) => {
        const text = lines.join('\n');
        const out = stripEcho(text, input);
        assert.ok(text.endsWith(out));
        assert.ok(out === text || out === '' || text.endsWith(`\n${out}`));
      }),
    );
  });
});

describe('newSection', () => {
  test('returns what follows the last known line, counting a repeated question as new', () => {
    const before = ['title', '> hi', 'hello', '╭──╮', '│ > │', '╰──╯'];
    const after = ['title', '> hi', 'hello', '> hi', 'hello', '╭──╮', '│ > │', '╰──╯'];
    assert.deepEqual(newSection(before, after), ['> hi', 'hello', '╭──╮', '│ > │', '╰──╯']);
  });

  test('skips lines that scrolled off the top', () => {
    assert.deepEqual(newSection(['h', 'o1', 'o2', 'o3', 'box'], ['h', 'o2', 'o3', 'new', 'box']), ['new', 'box']);
  });

  test('property: lines appended to a screen are exactly the new section', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 10 }),
        fc.array(fc.stringMatching(/^NEW [a-z]{1,8}$/), { minLength: 1, maxLength: 5 }),
        (before, added) => {
          assert.deepEqual(newSection(before, [...before, ...added]), added);
        },
      ),
    );
  });

  test('an unchanged screen has no new section', () => {
    fc.assert(fc.property(fc.array(line, { maxLength: 10 }), (screen) => assert.deepEqual(newSection(screen, [...screen]), [])));
  });
});

test('trimBlankLines drops blank lines at both ends and trailing spaces', () => {
  assert.equal(trimBlankLines('\n  \nhello  \n\n  world\n \n'), 'hello\n\n  world');
  assert.equal(trimBlankLines(' \n '), '');
});
