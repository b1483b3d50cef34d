// Real programs on a real pseudo-terminal: python3 -i and bash (which no one
// here wrote) and the scripted full-screen agent in test/fixtures.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '@switchyard/test-support';
import type { AgentSession } from '../agentSession.js';
import { PtyAgentSession, type PtySessionOptions } from './ptySession.js';

const FAKE_TUI = fileURLToPath(new URL('../../../test/fixtures/fake-tui-agent.mjs', import.meta.url));
const sessions: AgentSession[] = [];
after(() => Promise.all(sessions.map((s) => s.close())));

async function start(options: PtySessionOptions & { command: string }) {
  const session = await PtyAgentSession.start({ stableWindowMs: 400, cols: 100, rows: 30, ...options });
  sessions.push(session);
  const statuses: string[] = [];
  session.conversation.on('status_change', ({ status }) => statuses.push(status));
  return { session, statuses };
}

/** Resolves once `check` holds, re-checking on every conversation event (generous timeout: the machine is shared). */
function until(session: AgentSession, check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const conversation = session.conversation;
    const timer = setTimeout(() => {
      done();
      reject(
        new Error(
          `timed out waiting for ${what}; messages: ${JSON.stringify(conversation.messages())}, screen: ${JSON.stringify(session.screen()?.lines)}`,
        ),
      );
    }, timeoutMs);
    const poll = setInterval(probe, 50);
    function done() {
      clearTimeout(timer);
      clearInterval(poll);
      conversation.off('message_update', probe);
      conversation.off('status_change', probe);
    }
    function probe() {
      if (check()) {
        done();
        resolve();
      }
    }
    conversation.on('message_update', probe);
    conversation.on('status_change', probe);
    probe();
  });
}

const stable = (session: AgentSession) => until(session, () => session.conversation.status === 'stable', 'stable');
const lastAgent = (session: AgentSession) => session.conversation.last('agent')?.content;
const lastIs = (session: AgentSession, role: string) => session.conversation.last()?.role === role;

/** Sends a message and waits for the reply to settle with `expected` in it. */
async function ask(session: AgentSession, content: string, expected: string | RegExp): Promise<string> {
  await stable(session);
  await session.sendMessage(content);
  const matches = () => {
    const reply = lastIs(session, 'agent') ? (lastAgent(session) ?? '') : '';
    return typeof expected === 'string' ? reply === expected : expected.test(reply);
  };
  await until(session, () => session.conversation.status === 'stable' && matches(), `a reply to ${JSON.stringify(content)}`);
  return lastAgent(session)!;
}

describe('python3 -i', () => {
  test('running then stable; replies without echo or prompt; a block; Ctrl-C as raw input interrupts', async () => {
    const { session, statuses } = await start({ command: 'python3', args: ['-i'] });
    await stable(session);
    assert.equal(statuses[0], 'stable', 'the starting interpreter was running, then stable');
    assert.match(session.conversation.messages()[0]!.content, /^Python 3\./, 'the banner is the first agent message');
    assert.doesNotMatch(session.conversation.messages()[0]!.content, />>>/);

    assert.equal(await ask(session, 'print(6 * 7)', '42'), '42');
    assert.equal(await ask(session, 'for i in range(3):\n    print(i * i)\n', '0\n1\n4'), '0\n1\n4');
    assert.equal(await ask(session, 'print("x" * 3)', 'xxx'), 'xxx');
    assert.ok(statuses.filter((s) => s === 'running').length >= 3, 'each message flipped the status to running');

    await stable(session);
    await session.sendMessage('import time; time.sleep(60)');
    // Ctrl-C before the interpreter has read the whole line would drop the rest of it, half-echoed: wait until
    // the line is echoed and the cursor is past it (the interpreter is running it).
    await until(
      session,
      () => {
        const { lines, cursor } = session.screen()!;
        const row = lines.findLastIndex((line) => line.includes('time.sleep(60)'));
        return row >= 0 && cursor.row > row;
      },
      'the line taken by the interpreter',
    );
    const users = session.conversation.messages().filter((m) => m.role === 'user').length;
    await session.sendRaw('\x03');
    await until(
      session,
      () => /KeyboardInterrupt/.test(lastAgent(session) ?? '') && session.conversation.status === 'stable',
      'KeyboardInterrupt',
    );
    assert.equal(session.conversation.messages().filter((m) => m.role === 'user').length, users, 'raw input is not recorded');
    assert.doesNotMatch(lastAgent(session)!, /time\.sleep/, 'the echo is stripped');
  });
});

describe('bash', () => {
  test('replies without echo; raw keys reach the terminal unrecorded', async () => {
    const { session } = await start({
      command: 'bash',
      args: ['--norc', '--noprofile', '-i'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', PS1: 'test-shell$ ' },
    });
    assert.equal(await ask(session, 'echo "hello $((6 * 7))"', 'hello 42'), 'hello 42');
    assert.equal(await ask(session, 'printf "a\\nb\\n"', 'a\nb'), 'a\nb');

    await stable(session);
    const before = session.conversation.messages().length;
    await session.sendRaw('echo raw-$((2 + 3))\r');
    await until(session, () => session.screen().lines.some((line) => line.trim() === 'raw-5'), 'raw-5 on the screen');
    assert.ok(
      session.conversation
        .messages()
        .slice(before)
        .every((m) => m.role === 'agent'),
      'no user message was recorded for raw input',
    );
  });
});

describe('a full-screen agent (scripted, Claude Code style)', () => {
  test('claude rules strip the box, status line, spinner and echo; repeated questions get their own replies', async () => {
    const { session } = await start({
      command: process.execPath,
      args: [FAKE_TUI, '--think-ms', '300'],
      agentType: 'claude',
      cols: 80,
      rows: 24,
    });
    await stable(session);
    assert.equal(session.conversation.messages()[0]?.content, '✻ Fake Agent (scripted test double)');
    assert.equal(await ask(session, 'hello there', /^You said/), 'You said: hello there\n  (11 characters)');
    assert.equal(await ask(session, 'hello there', /^You said/), 'You said: hello there\n  (11 characters)');
    assert.equal(session.conversation.messages().filter((m) => m.role === 'agent').length, 3);
    assert.equal(await ask(session, 'two\nlines', /^You said/), 'You said: two\nlines\n  (9 characters)');

    await stable(session);
    await session.sendRaw('abc');
    await until(session, () => session.screen().lines.some((line) => line.startsWith('│ > abc')), 'typed keys in the input box');
  });

  test('Esc as raw input interrupts a long turn', async () => {
    const { session } = await start({
      command: process.execPath,
      args: [FAKE_TUI, '--think-ms', '60000'],
      agentType: 'claude',
      cols: 80,
      rows: 24,
    });
    await stable(session);
    await session.sendMessage('take your time');
    await until(session, () => session.screen().lines.some((line) => line.includes('esc to interrupt')), 'the spinner');
    await session.sendRaw('\x1b');
    await until(
      session,
      () => session.conversation.status === 'stable' && /Interrupted by user/.test(lastAgent(session) ?? ''),
      'the interruption',
    );
  });
});

test('a missing command is a start_failed error naming it', async () => {
  await assert.rejects(
    PtyAgentSession.start({ command: 'no-such-agent-command-xyz' }),
    /command not found or not executable: no-such-agent-command-xyz/,
  );
});

test('how a program ended: its exit code, or the signal that killed it by name and no exit code', async () => {
  const ended = async (script: string) => {
    const { session } = await start({ command: 'sh', args: ['-c', script] });
    await eventually(`sh -c ${JSON.stringify(script)} to end`, () => session.exit !== undefined, 20_000);
    return session.exit;
  };
  assert.deepEqual(await ended('exit 3'), { exitCode: 3, signal: null });
  // A killed program has no exit code; 0 would read as success. The name matches the ACP transport's.
  assert.deepEqual(await ended('kill -KILL $$'), { exitCode: null, signal: 'SIGKILL' });
});
