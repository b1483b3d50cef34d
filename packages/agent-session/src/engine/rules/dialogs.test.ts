// Dialog detection on screen snapshots. The screens are written recordings of the dialogs terminal
// agents draw (the versions are named at each); the arrangement of rows, markers and borders is
// what the detector reads, the wording is ours.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ARROW_DOWN, ARROW_UP, detectDialog, dialogKeys, publicDialog } from './dialogs.js';

const screen = (...lines: string[]) => ({ lines: [...lines, '', '', ''] });

describe('menus: numbered options with one selected', () => {
  test('a boxed trust prompt (recording standing for Claude Code 2.0)', () => {
    const dialog = detectDialog(
      screen(
        '╭──────────────────────────────────────────────╮',
        '│ Do you trust the files in this folder?       │',
        '│                                              │',
        '│ /work/project                                │',
        '│                                              │',
        '│ ❯ 1. Yes, proceed                            │',
        '│   2. No, exit                                │',
        '│                                              │',
        '╰──────────────────────────────────────────────╯',
        '   Enter to confirm · Esc to exit',
      ),
    );
    assert.deepEqual(dialog, {
      kind: 'menu',
      text: 'Do you trust the files in this folder?\n\n/work/project',
      options: ['Yes, proceed', 'No, exit'],
      selected: 0,
    });
  });

  test('an approval menu with the second option selected (recording standing for Codex CLI 0.46)', () => {
    const dialog = detectDialog(
      screen(
        '> You are running Codex in /work/project',
        '',
        '  This folder is not version controlled; we recommend asking before edits.',
        '',
        '  1. Allow Codex to work here without asking',
        '› 2. Ask before edits and commands',
        '',
        '  Press Enter to continue',
      ),
    );
    assert.equal(dialog?.kind, 'menu');
    assert.deepEqual(dialog?.options, ['Allow Codex to work here without asking', 'Ask before edits and commands']);
    assert.equal(dialog?.selected, 1);
    assert.match(dialog?.text ?? '', /not version controlled/);
  });

  test('radio buttons in a tool-permission box (recording standing for Gemini CLI 0.9)', () => {
    const dialog = detectDialog(
      screen(
        '╭─────────────────────────────────────────╮',
        '│ ? Shell ls -la                          │',
        '│                                         │',
        '│ Allow execution of: ls?                 │',
        '│                                         │',
        '│ ● 1. Yes, allow once                    │',
        '│ ○ 2. Yes, allow always ...              │',
        '│ ○ 3. No, suggest changes (esc)          │',
        '╰─────────────────────────────────────────╯',
      ),
    );
    assert.deepEqual(publicDialog(dialog!), {
      text: '? Shell ls -la\n\nAllow execution of: ls?',
      options: ['Yes, allow once', 'Yes, allow always ...', 'No, suggest changes (esc)'],
    });
  });

  test('a nested command box inside the permission box (recording standing for Copilot CLI 0.0.330)', () => {
    const dialog = detectDialog(
      screen(
        ' ╭──────────────────────────────────────────╮',
        ' │ Search for files                         │',
        ' │ ╭──────────────────────────────────────╮ │',
        ' │ │ grep -rl useEffect .                 │ │',
        ' │ ╰──────────────────────────────────────╯ │',
        ' │                                          │',
        ' │ Do you want to run this command?         │',
        ' │                                          │',
        ' │ ❯ 1. Yes                                 │',
        ' │   2. Yes, and approve grep for the rest  │',
        ' │   3. No, and tell Copilot what to do     │',
        ' │                                          │',
        ' │ Confirm with number keys or ↑↓ and Enter │',
        ' ╰──────────────────────────────────────────╯',
      ),
    );
    assert.equal(dialog?.text, 'Do you want to run this command?');
    assert.equal(dialog?.options.length, 3);
  });

  test('a numbered list in a reply is no dialog: nothing is selected', () => {
    assert.equal(
      detectDialog(screen('Here is the plan:', '1. Read the file', '2. Fix the bug', '3. Run the tests', '', '╭────╮', '│ >  │', '╰────╯')),
      undefined,
    );
  });

  test('an input box with a > prompt is no dialog', () => {
    assert.equal(detectDialog(screen('⏺ Done.', '', '╭──────────────╮', '│ > 1. hello   │', '╰──────────────╯')), undefined);
    assert.equal(detectDialog(screen('>>> print(1)', '1', '>>> ')), undefined);
  });
});

describe('letter prompts', () => {
  test('[y/n/t] with an input line under it (recording standing for Amazon Q CLI 1.16)', () => {
    const dialog = detectDialog(
      screen(
        '🛠️  Using tool: fs_read',
        ' ● Reading file: README.md',
        '',
        "Allow this action? Use 't' to trust (always allow) this tool for the session. [y/n/t]:",
        '',
        '>',
      ),
    );
    assert.deepEqual(dialog, {
      kind: 'letters',
      text: "Allow this action? Use 't' to trust (always allow) this tool for the session.",
      options: ['Yes', 'No', 'Trust'],
      letters: ['y', 'n', 't'],
      selected: 0,
    });
    assert.deepEqual(dialogKeys(dialog!, 3), ['t', '\r']);
  });

  test('spelled-out letters with a default (recording standing for aider 0.86)', () => {
    const dialog = detectDialog(screen('README.md', "Add file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]:"));
    assert.deepEqual(dialog?.options, ['Yes', 'No', "Don't ask again"]);
    assert.equal(dialog?.text, 'README.md\nAdd file to the chat?');
    assert.deepEqual(dialogKeys(dialog!, 2), ['n', '\r']);
  });

  test('a question in the scrollback far above the last row is no dialog', () => {
    assert.equal(detectDialog(screen('Continue? [y/n]: y', 'ok', 'working', 'done', '$ ')), undefined);
  });
});

test('dialogKeys moves from the selected option to the wanted one, then presses Enter', () => {
  const menu = { kind: 'menu' as const, text: '', options: ['a', 'b', 'c'], selected: 1 };
  assert.deepEqual(dialogKeys(menu, 2), ['\r']);
  assert.deepEqual(dialogKeys(menu, 3), [ARROW_DOWN, '\r']);
  assert.deepEqual(dialogKeys(menu, 1), [ARROW_UP, '\r']);
});

describe('menus without numbers', () => {
  // The screen text of Claude Code 2.1.332's trust prompt, captured in a live run (tests/agents/claude.test.ts).
  const trust = [
    '─'.repeat(100),
    ' Accessing workspace:',
    '',
    ' /tmp/agent-claude-12rKaH/work',
    '',
    ' Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source',
    " project, or work from your team). If not, take a moment to review what's in this folder first.",
    '',
    " Claude Code'll be able to read, edit, and execute files here.",
    '',
    ' Security guide',
    '',
    ' ❯ No, exit',
    '   Yes, I trust this folder',
    '',
    ' Enter to confirm · Esc to cancel',
    '',
  ];

  test("Claude Code's trust prompt: the options in order, the marked one selected, the arrows to the other", () => {
    const dialog = detectDialog({ lines: trust });
    assert.equal(dialog?.kind, 'menu');
    assert.deepEqual(dialog?.options, ['No, exit', 'Yes, I trust this folder']);
    assert.equal(dialog?.selected, 0);
    assert.match(dialog!.text, /Is this a project you created or one you trust\?/);
    assert.deepEqual(dialogKeys(dialog!, 2), [ARROW_DOWN, '\r']);
  });

  test('without the hint under it, or with options at other columns, it is no dialog', () => {
    assert.equal(detectDialog({ lines: trust.slice(0, -2) }), undefined);
    assert.equal(detectDialog({ lines: [' Question?', '', ' ❯ No, exit', '       Yes', '', ' Enter to confirm'] }), undefined);
    assert.equal(detectDialog({ lines: ['─'.repeat(40), '❯ ', '─'.repeat(40), '  ? for shortcuts'] }), undefined);
  });
});
