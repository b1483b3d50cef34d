// The PTY session's timing and typing rules on a fake clock. The screen is a
// real @xterm/headless terminal; the "program" is this test writing to it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import type { AgentExit } from '../conversation.js';
import type { AgentSessionError } from '../errors.js';
import { genericRules } from '../rules/messageRules.js';
import { HeadlessScreen } from './headlessScreen.js';
import { PtyAgentSession, pasteSequence } from './ptySession.js';
import type { TerminalProgram } from './terminalProgram.js';

interface ScriptedProgram extends TerminalProgram {
  inputs: string[];
  print(text: string): Promise<void>;
  end(exit: AgentExit): void;
}

async function scriptedProgram(): Promise<ScriptedProgram> {
  const screen = await HeadlessScreen.create({ cols: 60, rows: 10 });
  const listeners: ((exit: AgentExit) => void)[] = [];
  const inputs: string[] = [];
  const end = (exit: AgentExit) => {
    for (const listener of listeners.splice(0)) listener(exit);
  };
  return {
    screen,
    pid: undefined,
    inputs,
    write: (data) => inputs.push(data),
    onExit: (listener) => listeners.push(listener),
    kill: () => end({ exitCode: null, signal: 'SIGTERM' }),
    resize: (cols, rows) => screen.resize(cols, rows),
    print: (text) => screen.write(text),
    end,
  };
}

async function started(prompt = '\x1b[?2004h>>> ') {
  const clock = new FakeScheduler(Date.parse('2026-01-01T00:00:00Z'));
  const program = await scriptedProgram();
  const session = await PtyAgentSession.start({ program, scheduler: clock, stableWindowMs: 2000, snapshotDelayMs: 50 });
  await program.print(`Banner 1.0\r\n${prompt}`);
  await clock.advance(2050);
  assert.equal(session.conversation.status, 'stable');
  return { clock, program, session };
}

describe('stability', () => {
  test('running until the screen has been unchanged for the whole window, then stable', async () => {
    const clock = new FakeScheduler(0);
    const program = await scriptedProgram();
    const session = await PtyAgentSession.start({ program, scheduler: clock, stableWindowMs: 2000, snapshotDelayMs: 50 });
    const statuses: string[] = [];
    session.conversation.on('status_change', ({ status }) => statuses.push(status));
    await program.print('starting…');
    await clock.advance(1000);
    await program.print('\r\nstill starting…');
    await clock.advance(2049);
    assert.equal(session.conversation.status, 'running', 'the second change restarted the window');
    await clock.advance(1);
    assert.equal(session.conversation.status, 'stable');
    assert.deepEqual(statuses, ['stable']);
    assert.deepEqual(
      session.conversation.messages().map((m) => m.content),
      ['starting…\nstill starting…'],
    );
    await session.close();
  });

  test('a program that shows nothing yet is starting: running until its first output settles, or until the startup grace', async () => {
    const clock = new FakeScheduler(0);
    const program = await scriptedProgram();
    const session = await PtyAgentSession.start({ program, scheduler: clock, stableWindowMs: 2000, startupGraceMs: 10_000 });
    await clock.advance(5000);
    assert.equal(session.conversation.status, 'running', 'silent for 5 s is still starting');
    await program.print('ready> ');
    await clock.advance(2049);
    assert.equal(session.conversation.status, 'running');
    await clock.advance(1);
    assert.equal(session.conversation.status, 'stable');
    const silent = await PtyAgentSession.start({ program: await scriptedProgram(), scheduler: clock, startupGraceMs: 10_000 });
    await clock.advance(9999);
    assert.equal(silent.conversation.status, 'running');
    await clock.advance(1);
    assert.equal(silent.conversation.status, 'stable', 'a program that never prints is stable after the grace');
    await Promise.all([session.close(), silent.close()]);
  });

  test('output that redraws the same screen does not count as a change', async () => {
    const { clock, program, session } = await started();
    await program.print('\r>>> ');
    await clock.advance(100);
    assert.equal(session.conversation.status, 'stable');
    await session.close();
  });
});

describe('user messages', () => {
  test('typed as a bracketed paste, Enter once the echo settles, echo stripped from the reply', async () => {
    const { clock, program, session } = await started();
    const sending = session.sendMessage('print(1)\nprint(2)');
    assert.equal(session.conversation.status, 'running');
    assert.deepEqual(program.inputs, ['\x1b[200~print(1)\rprint(2)\x1b[201~']);
    await program.print('print(1)\r\n... print(2)');
    await clock.advance(99);
    assert.equal(program.inputs.length, 1, 'Enter waits for the paste to settle');
    await clock.advance(1);
    await sending;
    assert.deepEqual(program.inputs.at(-1), '\r');
    await program.print('\r\n1\r\n2\r\n>>> ');
    await clock.advance(2050);
    assert.equal(session.conversation.status, 'stable');
    assert.deepEqual(
      session.conversation.messages().map((m) => [m.role, m.content]),
      [
        ['agent', 'Banner 1.0'],
        ['user', 'print(1)\nprint(2)'],
        ['agent', '1\n2'],
      ],
    );
    await session.close();
  });

  test('a program that did not ask for bracketed paste gets the text as typed; Enter follows after the paste timeout if nothing shows', async () => {
    const { clock, program, session } = await started('> ');
    const sending = session.sendMessage('hello\nworld');
    assert.deepEqual(program.inputs, ['hello\rworld']);
    await clock.advance(2999);
    assert.equal(program.inputs.length, 1);
    await clock.advance(1);
    await sending;
    assert.deepEqual(program.inputs, ['hello\rworld', '\r']);
    await session.close();
  });

  test('refused with busy while the agent runs or a message is being typed', async () => {
    const { clock, program, session } = await started();
    const sending = session.sendMessage('first');
    await assert.rejects(session.sendMessage('second'), (error: AgentSessionError) => error.code === 'busy');
    await clock.advance(3000);
    await sending;
    await program.print('working…');
    await clock.advance(100);
    await assert.rejects(session.sendMessage('third'), (error: AgentSessionError) => error.code === 'busy');
    assert.equal(session.conversation.messages().filter((m) => m.role === 'user').length, 1);
    await session.close();
  });

  test('bad content is refused naming the field', async () => {
    const { session } = await started();
    for (const bad of ['', '   \n', 'bell\u0007', 'x'.repeat(256 * 1024 + 1)]) {
      await assert.rejects(
        session.sendMessage(bad),
        (error: AgentSessionError) => error.code === 'invalid_input' && error.field === 'content',
      );
    }
    await session.close();
  });

  test('pasteSequence follows what a terminal sends', () => {
    assert.equal(pasteSequence('a\nb\r\nc', true), '\x1b[200~a\rb\rc\x1b[201~');
    assert.equal(pasteSequence('a\nb', false), 'a\rb');
  });
});

describe('raw input and exit', () => {
  test('raw input reaches the program at any time and is not recorded', async () => {
    const { clock, program, session } = await started();
    await program.print('busy…');
    await clock.advance(100);
    assert.equal(session.conversation.status, 'running');
    await session.sendRaw('\x03');
    assert.deepEqual(program.inputs, ['\x03']);
    assert.ok(session.conversation.messages().every((m) => m.role === 'agent'));
    await session.close();
  });

  test('an exit is a fatal agent_error, the status settles, and input is refused', async () => {
    const { program, session } = await started();
    const errors: string[] = [];
    session.conversation.on('agent_error', (event) => errors.push(`${event.fatal}:${event.message}`));
    program.end({ exitCode: 1, signal: null });
    assert.deepEqual(errors, ['true:the agent exited (code 1)']);
    assert.deepEqual(session.exit, { exitCode: 1, signal: null });
    await assert.rejects(session.sendMessage('hello'), (error: AgentSessionError) => error.code === 'agent_exited');
    await assert.rejects(session.sendRaw('x'), (error: AgentSessionError) => error.code === 'agent_exited');
    await session.close();
  });
});

describe('a full-screen agent', () => {
  /** Rules that see the input area when a `> ` row is on screen (as the full-screen agents' rules do). */
  const rules = {
    ...genericRules,
    kind: 'boxed',
    ready: (screen: { lines: readonly string[] }) => screen.lines.some((line) => line.startsWith('> ')),
  };

  test('without its input area on screen it stays running, however quiet, up to readyTimeoutMs; then stable', async () => {
    const clock = new FakeScheduler(0);
    const program = await scriptedProgram();
    const session = await PtyAgentSession.start({ program, scheduler: clock, stableWindowMs: 2000, rules, readyTimeoutMs: 30_000 });
    await program.print('loading…');
    await clock.advance(20_000);
    assert.equal(session.conversation.status, 'running', 'no input area yet: still starting');
    await program.print('\r\n> ');
    await clock.advance(2100);
    assert.equal(session.conversation.status, 'stable', 'the input area is drawn');

    // A redraw that clears the screen is no waiting for input either.
    await program.print('\x1b[H\x1b[2Jswitching views');
    await clock.advance(20_000);
    assert.equal(session.conversation.status, 'running');
    await clock.advance(12_000);
    assert.equal(session.conversation.status, 'stable', 'readyTimeoutMs after the input area was last seen, the quiet screen decides');
    await session.close();
  });

  test('after Enter it stays running until the screen reacts, up to reactionTimeoutMs', async () => {
    const { clock, program, session } = await started();
    const sending = session.sendMessage('hello');
    await program.print('hello');
    await clock.advance(3000);
    await sending;
    await clock.advance(10_000);
    assert.equal(session.conversation.status, 'running', 'Enter went in and nothing changed since: not taken yet');
    await program.print('\r\nhi there\r\n>>> ');
    await clock.advance(2100);
    assert.equal(session.conversation.status, 'stable', 'the agent reacted, then went quiet');

    const again = session.sendMessage('anyone?');
    await program.print('anyone?');
    await clock.advance(3000);
    await again;
    await clock.advance(9000);
    assert.equal(session.conversation.status, 'running', '12 s after Enter, still nothing changed');
    await clock.advance(5000);
    assert.equal(session.conversation.status, 'stable', 'past reactionTimeoutMs (15 s) after Enter, the quiet screen decides');
    await session.close();
  });
});
