// Every agent type on a screen recording, replayed through the PTY session on a fake clock:
// the agent becomes stable after start-up, stays running while its busy indicator is shown
// (however long the screen is quiet), and a round trip gives exactly one clean agent message.
//
// Two kinds of recording:
// - CAPTURED: the screen text of the five CLIs that run here (Claude Code, Codex, Gemini CLI, Qwen
//   Code, OpenCode), captured from live runs at their pinned versions (tests/agents/captureScreens.mts,
//   files in test/fixtures/screens/); the live tests are tests/agents/*.test.ts.
// - HAND-WRITTEN: written after the screens of the agent versions named below (the layout, borders,
//   markers and indicators of each; the wording is ours). They stand in for the agents whose
//   vendors' sign-in or distribution keeps them off this machine (aider, goose, amp, copilot,
//   cursor, auggie, amazonq).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FakeScheduler } from '@switchyard/runtime';
import type { AgentExit } from '../conversation.js';
import type { AgentSessionError } from '../errors.js';
import { HeadlessScreen } from '../pty/headlessScreen.js';
import { PtyAgentSession } from '../pty/ptySession.js';
import type { TerminalProgram } from '../pty/terminalProgram.js';
import { inferAgentType, rulesFor } from './agentRules.js';
import { customAgentRules } from './customRules.js';

interface Recording {
  /** The agent type, and the version the recording stands for. */
  agent: string;
  version: string;
  /** Terminal output: start-up, then (after the message is typed) working, then the reply. */
  startup: string;
  working: string;
  reply: string;
  input: string;
  expected: string;
  /** Terminal size (default 100×30). */
  cols?: number;
  rows?: number;
}

/** The screens of a CLI captured in a live run (test/fixtures/screens/<agent>.json). */
interface CapturedScreens {
  agent: string;
  version: string;
  captured: string;
  cols: number;
  rows: number;
  input: string;
  expected: string;
  startup: string[];
  working: string[];
  reply: string[];
}

function captured(agent: string): Recording {
  const path = fileURLToPath(new URL(`../../../test/fixtures/screens/${agent}.json`, import.meta.url));
  const screens = JSON.parse(readFileSync(path, 'utf8')) as CapturedScreens;
  return {
    agent: screens.agent,
    version: `${screens.version} (captured live ${screens.captured})`,
    startup: frame(...screens.startup),
    working: frame(...screens.working),
    reply: frame(...screens.reply),
    input: screens.input,
    expected: screens.expected,
    cols: screens.cols,
    rows: screens.rows,
  };
}

const CLEAR = '\x1b[H\x1b[2J';
/** A full-screen frame: the screen cleared and drawn row by row. */
const frame = (...rows: string[]) => CLEAR + rows.join('\r\n');
/** Line-oriented output: rows appended after what is there. */
const lines = (...rows: string[]) => rows.join('\r\n');
const box = (width: number, ...inner: string[]) => [
  `╭${'─'.repeat(width)}╮`,
  ...inner.map((row) => `│ ${row.padEnd(width - 2)} │`),
  `╰${'─'.repeat(width)}╯`,
];

const recordings: Recording[] = [
  ...['claude', 'codex', 'gemini', 'qwen', 'opencode'].map(captured),
  {
    agent: 'aider',
    version: 'aider 0.86.1 (recording)',
    startup: lines(
      'Aider v0.86.1',
      'Main model: gpt-4o with diff edit format',
      'Git repo: .git with 12 files',
      'Use /help <text> for help',
      '─'.repeat(60),
      '> ',
    ),
    working: lines('What is 6 * 7?', '', '░█ Waiting for gpt-4o'),
    reply: `\r\x1b[K${lines('6 * 7 is 42.', '', 'Tokens: 2.1k sent, 12 received. Cost: $0.0053 message, $0.0053 session.', '─'.repeat(60), '> ')}`,
    input: 'What is 6 * 7?',
    expected: '6 * 7 is 42.',
  },
  {
    agent: 'goose',
    version: 'Goose 1.9.3 (recording)',
    startup: lines(
      'starting session | provider: openai model: gpt-4o',
      '    logging to /home/me/.local/share/goose/sessions/20251127.jsonl',
      '    working directory: /work/project',
      '',
      'Goose is running! Enter your instructions, or try asking what goose can do.',
      '',
      '( O)> ',
    ),
    working: lines('What is 6 * 7?', '◐  Counting on fingers...'),
    reply: `\r\x1b[K${lines('6 * 7 is 42.', '', '( O)> ')}`,
    input: 'What is 6 * 7?',
    expected: '6 * 7 is 42.',
  },
  {
    agent: 'amp',
    version: 'Amp CLI 0.0.1762 (recording)',
    startup: frame(
      '',
      '  Welcome to Amp',
      '',
      `╭─smart${'─'.repeat(60)}╮`,
      `│${' '.repeat(66)}│`,
      `│${' '.repeat(66)}│`,
      `╰${'─'.repeat(40)}~/work/project (main)─╯`,
      '                                                        0% of 968k',
    ),
    working: frame(
      '',
      '  ┃ What is 6 * 7?',
      '',
      '  ≈ Thinking ▶',
      '',
      `╭─smart${'─'.repeat(60)}╮`,
      `│${' '.repeat(66)}│`,
      `│${' '.repeat(66)}│`,
      `╰${'─'.repeat(40)}~/work/project (main)─╯`,
      '  Esc to cancel                                          1% of 968k',
    ),
    reply: frame(
      '',
      '  ┃ What is 6 * 7?',
      '',
      '  ✓ Thinking ▶',
      '',
      '  6 * 7 is 42.',
      '',
      `╭─smart${'─'.repeat(60)}╮`,
      `│${' '.repeat(66)}│`,
      `│${' '.repeat(66)}│`,
      `╰${'─'.repeat(40)}~/work/project (main)─╯`,
      '                                                        1% of 968k',
    ),
    input: 'What is 6 * 7?',
    expected: '6 * 7 is 42.',
  },
  {
    agent: 'copilot',
    version: 'GitHub Copilot CLI 0.0.330 (recording)',
    startup: frame(
      ' Welcome to GitHub Copilot CLI',
      ' Version 0.0.330 · Commit 1a2b3c4',
      '',
      ...box(60, '>  Enter @ to mention files or / for commands'),
      ' Ctrl+c Exit · Ctrl+r Expand recent',
    ),
    working: frame(
      ' Welcome to GitHub Copilot CLI',
      ' Version 0.0.330 · Commit 1a2b3c4',
      '',
      ' > What is 6 * 7?',
      '',
      ' ◉ Thinking (Esc to cancel)',
      '',
      ...box(60, '>  Enter @ to mention files or / for commands'),
      ' Ctrl+c Exit · Ctrl+r Expand recent',
    ),
    reply: frame(
      ' Welcome to GitHub Copilot CLI',
      ' Version 0.0.330 · Commit 1a2b3c4',
      '',
      ' > What is 6 * 7?',
      '',
      ' ● 6 * 7 is 42.',
      '',
      ...box(60, '>  Enter @ to mention files or / for commands'),
      ' Ctrl+c Exit · Ctrl+r Expand recent',
    ),
    input: 'What is 6 * 7?',
    expected: '6 * 7 is 42.',
  },
  {
    agent: 'cursor',
    version: 'Cursor Agent 2025.11.06 (recording)',
    startup: frame(
      '',
      '  Cursor Agent',
      '  ~/work/project · main',
      '',
      ` ┌${'─'.repeat(60)}┐`,
      ` │ → Plan, search, build anything${' '.repeat(29)}│`,
      ` └${'─'.repeat(60)}┘`,
      '',
      '  Claude 4.5 Sonnet',
      '  / for commands · @ for files',
    ),
    working: frame(
      '',
      '  Cursor Agent',
      '  ~/work/project · main',
      '',
      ` ┌${'─'.repeat(60)}┐`,
      ` │ What is 6 * 7?${' '.repeat(45)}│`,
      ` └${'─'.repeat(60)}┘`,
      '',
      '  ⬡ Thinking.    64 tokens',
      ` ┌${'─'.repeat(60)}┐`,
      ` │ → Add a follow-up${' '.repeat(42)}│`,
      ` └${'─'.repeat(60)}┘`,
      '',
      '  Claude 4.5 Sonnet',
      '  / for commands · @ for files',
    ),
    reply: frame(
      '',
      '  Cursor Agent',
      '  ~/work/project · main',
      '',
      ` ┌${'─'.repeat(60)}┐`,
      ` │ What is 6 * 7?${' '.repeat(45)}│`,
      ` └${'─'.repeat(60)}┘`,
      '',
      '  6 * 7 is 42.',
      '',
      ` ┌${'─'.repeat(60)}┐`,
      ` │ → Add a follow-up${' '.repeat(42)}│`,
      ` └${'─'.repeat(60)}┘`,
      '',
      '  Claude 4.5 Sonnet',
      '  / for commands · @ for files',
    ),
    input: 'What is 6 * 7?',
    expected: '6 * 7 is 42.',
  },
  {
    agent: 'auggie',
    version: 'Auggie 0.5.10 (recording)',
    startup: frame(
      ' Welcome to Auggie',
      '',
      ...box(60, "› Try 'how do I log an error?' or type / for commands"),
      ' Type / for commands • ↑↓ for history • Esc/Ctrl+C to interrupt',
    ),
    working: frame(
      ' Welcome to Auggie',
      '',
      ' › What is 6 * 7?',
      '',
      ' ⠞ Processing response... (2s • esc to interrupt)',
      '',
      ...box(60, "› Try 'how do I log an error?' or type / for commands"),
      ' Type / for commands • ↑↓ for history • Esc/Ctrl+C to interrupt',
    ),
    reply: frame(
      ' Welcome to Auggie',
      '',
      ' › What is 6 * 7?',
      '',
      ' » 6 * 7 is 42.',
      '',
      ...box(60, "› Try 'how do I log an error?' or type / for commands"),
      ' Type / for commands • ↑↓ for history • Esc/Ctrl+C to interrupt',
    ),
    input: 'What is 6 * 7?',
    expected: '6 * 7 is 42.',
  },
  {
    agent: 'amazonq',
    version: 'Amazon Q Developer CLI 1.16.2 (recording)',
    startup: lines(
      'To learn more about MCP safety, see https://docs.aws.amazon.com/amazonq/',
      '',
      '🤖 You are chatting with claude-sonnet-4',
      '',
      '> ',
    ),
    working: lines('What is 6 * 7?', '', '⠋ Thinking...'),
    reply: `\r\x1b[K${lines('> 6 * 7 is 42.', '', '> ')}`,
    input: 'What is 6 * 7?',
    expected: '6 * 7 is 42.',
  },
];

async function scriptedProgram(cols = 100, rows = 30): Promise<TerminalProgram & { print(text: string): Promise<void> }> {
  const screen = await HeadlessScreen.create({ cols, rows });
  const listeners: ((exit: AgentExit) => void)[] = [];
  return {
    screen,
    pid: undefined,
    write: () => undefined,
    onExit: (listener) => listeners.push(listener),
    kill: () => {
      for (const listener of listeners.splice(0)) listener({ exitCode: null, signal: 'SIGTERM' });
    },
    resize: (cols, rows) => screen.resize(cols, rows),
    print: (text) => screen.write(text),
  };
}

describe('agent types on screen recordings', () => {
  for (const recording of recordings) {
    test(`${recording.agent} (${recording.version}): stable after start-up, running while busy, one clean reply`, async () => {
      const clock = new FakeScheduler(0);
      const program = await scriptedProgram(recording.cols, recording.rows);
      const session = await PtyAgentSession.start({
        program,
        scheduler: clock,
        agentType: inferAgentType(recording.agent),
        stableWindowMs: 2000,
      });
      assert.equal(session.agentType, recording.agent);
      await program.print(recording.startup);
      await clock.advance(2100);
      assert.equal(session.conversation.status, 'stable', 'stable after start-up');
      assert.equal(session.dialog(), undefined, 'the input area is no dialog');

      const sending = session.sendMessage(recording.input);
      await program.print(recording.working);
      await clock.advance(3000);
      await sending;
      await clock.advance(10_000);
      assert.equal(session.conversation.status, 'running', 'running while the busy indicator is shown, however quiet the screen');

      await program.print(recording.reply);
      await clock.advance(2100);
      assert.equal(session.conversation.status, 'stable', 'stable once the reply is done');
      const messages = session.conversation.messages();
      const user = messages.findIndex((m) => m.role === 'user');
      assert.deepEqual(
        messages.slice(user).map((m) => [m.role, m.content]),
        [
          ['user', recording.input],
          ['agent', recording.expected],
        ],
      );
      await session.close();
    });
  }
});

test('the agent type is inferred from the command name; other programs are generic', () => {
  assert.equal(inferAgentType('/usr/local/bin/claude'), 'claude');
  assert.equal(inferAgentType('cursor-agent'), 'cursor');
  assert.equal(inferAgentType('q'), 'amazonq');
  assert.equal(inferAgentType('C:\\tools\\codex.cmd'), 'codex');
  assert.equal(inferAgentType('python3'), 'generic');
  for (const type of ['codex', 'gemini', 'qwen', 'opencode', 'aider', 'goose', 'amp', 'copilot', 'cursor', 'auggie', 'amazonq'])
    assert.equal(rulesFor(type).kind, type);
});

test('custom rules from a spec strip the chrome named and keep the agent running while it says it is busy', () => {
  const rules = customAgentRules({ chrome: ['^\\s*tokens: \\d+'], busy: ['thinking…'], bullet: '◆ ' });
  const screen = ['> hello', '', '◆ Hi there.', '  tokens: 12', '', ...box(30, '> '), ' my-agent 1.0'].join('\n');
  assert.equal(rules.format({ text: screen, userInput: 'hello', prompt: '', cursorLine: undefined }), 'Hi there.');
  assert.equal(rules.busy?.({ lines: ['◆ Thinking… (3s)'] }), true);
  assert.equal(rules.ready?.({ lines: box(30, '> ') }), true, 'ready once its input box is on screen');
  assert.equal(rules.ready?.({ lines: ['loading…'] }), false);
  assert.equal(customAgentRules({ input_box: 'none' }).ready, undefined, 'without an input box, no readiness from the screen');
  assert.equal(rules.busy?.({ lines: ['◆ Hi there.'] }), false);
  assert.throws(
    () => customAgentRules({ chrome: ['(unclosed'] }),
    (error: AgentSessionError) => error.code === 'invalid_input' && error.field === 'chrome.0',
  );
  assert.throws(
    () => customAgentRules({ input_box: 'sideways' }),
    (error: AgentSessionError) => error.field === 'input_box',
  );
});
