import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rulesFor } from './agentRules.js';
import { claudeRules, genericRules, inputBoxStart, type ScreenChange, stripTrailingPrompt } from './messageRules.js';

const change = (text: string, userInput: string, extra: Partial<ScreenChange> = {}): ScreenChange => ({
  text,
  userInput,
  prompt: '',
  cursorLine: undefined,
  ...extra,
});

describe('generic rules (REPLs and shells)', () => {
  test('python: echo and the new prompt are stripped', () => {
    const screen = '>>> print(6 * 7)\n42\n>>> ';
    assert.equal(genericRules.format(change(screen, 'print(6 * 7)', { prompt: '>>>', cursorLine: '>>>' })), '42');
  });

  test('python: a closed block leaves no bare continuation prompt behind', () => {
    const screen = '>>> for i in range(2):\n...     print(i)\n... \n0\n1\n>>> ';
    assert.equal(genericRules.format(change(screen, 'for i in range(2):\n    print(i)\n', { prompt: '>>>', cursorLine: '>>>' })), '0\n1');
  });

  test('bash: a prompt that changed after cd is still recognised as a prompt', () => {
    const screen = 'me@box:~$ cd /tmp && ls -d /tmp\n/tmp\nme@box:/tmp$ ';
    assert.equal(genericRules.format(change(screen, 'cd /tmp && ls -d /tmp', { prompt: 'me@box:~$', cursorLine: 'me@box:/tmp$' })), '/tmp');
  });

  test('the banner before the first message keeps its text and loses the prompt', () => {
    const screen = 'Python 3.11.7 on linux\nType "help" for more information.\n>>> ';
    assert.equal(
      genericRules.format(change(screen, '', { cursorLine: '>>>' })),
      'Python 3.11.7 on linux\nType "help" for more information.',
    );
  });

  test('output the cursor is not waiting behind is never taken for a prompt', () => {
    assert.equal(stripTrailingPrompt('progress\n100%', { prompt: '', cursorLine: undefined }), 'progress\n100%');
    assert.equal(stripTrailingPrompt('done\n$', { prompt: '$', cursorLine: '$' }), 'done');
  });
});

describe('claude rules (full-screen agents with an input box)', () => {
  const screen = [
    '> Rename foo to bar in utils.ts',
    '',
    '⏺ I will rename the function.',
    '',
    '⏺ Update(utils.ts)',
    '  ⎿  Updated utils.ts with 2 additions and 2 removals',
    '',
    '⏺ Done: foo is now bar.',
    '',
    '╭────────────────────────────────────────────╮',
    '│ >                                          │',
    '╰────────────────────────────────────────────╯',
    '  ? for shortcuts                 ◯ IDE disconnected',
  ].join('\n');

  test('strips the echo, the input box, the status line and the reply bullets', () => {
    assert.equal(
      claudeRules.format(change(screen, 'Rename foo to bar in utils.ts')),
      'I will rename the function.\n\nUpdate(utils.ts)\n  ⎿  Updated utils.ts with 2 additions and 2 removals\n\nDone: foo is now bar.',
    );
  });

  test('a spinner line while the agent works is no part of the message', () => {
    const working = ['> hello', '', '✻ Thinking… (esc to interrupt)', '', '╭──────────╮', '│ >        │', '╰──────────╯'].join('\n');
    assert.equal(claudeRules.format(change(working, 'hello')), '');
  });

  test('a long paste shown as a placeholder is dropped like an echo', () => {
    const pasted = ['> [Pasted text #1 +42 lines]', '', '⏺ Read it.', '', '──────────────────', '> ', '──────────────────'].join('\n');
    assert.equal(claudeRules.format(change(pasted, `${'line\n'.repeat(42)}end`)), 'Read it.');
  });

  test('inputBoxStart finds a boxed or a ruled input line near the bottom, and nothing else', () => {
    assert.equal(inputBoxStart(['text', '╭────╮', '│ > hi │', '╰────╯', 'status']), 1);
    assert.equal(inputBoxStart(['text', '───────────────', '> ', '───────────────']), 1);
    assert.equal(inputBoxStart(['just', 'text', '> quoted reply']), -1);
  });
});

test('rulesFor picks shipped rules by kind (case-insensitive), custom rules first, generic otherwise', () => {
  assert.equal(rulesFor('claude').kind, 'claude');
  assert.equal(rulesFor('Claude-Code').kind, 'claude');
  assert.equal(rulesFor('python'), genericRules);
  assert.equal(rulesFor(undefined), genericRules);
  assert.equal(rulesFor('constructor'), genericRules, 'names of Object.prototype members are not rules');
  const mine = { ...genericRules, kind: 'mine' };
  assert.equal(rulesFor('mine', { mine }), mine);
  assert.equal(rulesFor('claude', { claude: mine }), mine);
  assert.equal(rulesFor('codex').kind, 'codex');
});
