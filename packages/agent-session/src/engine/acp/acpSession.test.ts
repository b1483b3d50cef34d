// The ACP client (on the official ACP SDK) against a scripted agent built on the same SDK's agent side.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FakeScheduler } from '@switchyard/runtime';
import { eventually } from '@switchyard/test-support';
import type { AgentSession } from '../agentSession.js';
import type { AgentSessionError } from '../errors.js';
import { AcpAgentSession, type AcpSessionOptions } from './acpSession.js';

const FAKE_ACP = fileURLToPath(new URL('../../../test/fixtures/fake-acp-agent.mjs', import.meta.url));
const sessions: AgentSession[] = [];
after(() => Promise.all(sessions.map((s) => s.close())));

async function start(options: Partial<AcpSessionOptions> = {}) {
  const session = await AcpAgentSession.start({ command: process.execPath, args: [FAKE_ACP], handshakeTimeoutMs: 20_000, ...options });
  sessions.push(session);
  return session;
}

function settled(session: AgentSession): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (session.conversation.status !== 'stable') return;
      session.conversation.off('status_change', check);
      resolve();
    };
    session.conversation.on('status_change', check);
    check();
  });
}

describe('ACP transport', () => {
  test('a prompt streams the reply into one agent message; the turn end makes the agent stable', async () => {
    const session = await start();
    assert.equal(session.conversation.status, 'stable', 'stable once the session exists');
    assert.equal(session.transport, 'acp');
    const statuses: string[] = [];
    session.conversation.on('status_change', ({ status }) => statuses.push(status));
    await session.sendMessage('hello');
    assert.equal(session.conversation.status, 'running');
    await assert.rejects(session.sendMessage('again'), (error: AgentSessionError) => error.code === 'busy');
    await settled(session);
    assert.deepEqual(statuses, ['running', 'stable']);
    assert.deepEqual(
      session.conversation.messages().map((m) => [m.id, m.role, m.content]),
      [
        [0, 'user', 'hello'],
        [1, 'agent', 'You said: hello'],
      ],
    );
  });

  test('asked permission requests are a dialog: a message is refused, POST /dialog answers; one left unanswered is denied on the clock', async () => {
    const clock = new FakeScheduler(Date.parse('2026-01-01T00:00:00Z'));
    const asking = await start({ permissions: 'ask', scheduler: clock, clock, permissionTimeoutMs: 60_000 });
    await asking.sendMessage('write notes');
    await eventually('the permission dialog', () => asking.dialog() !== undefined, 20_000);
    assert.deepEqual(asking.dialog(), { text: 'The agent asks for permission: Write notes.txt', options: ['Allow', 'Reject'] });
    assert.equal(asking.conversation.status, 'running', 'the turn goes on while the agent waits');
    await assert.rejects(asking.sendMessage('hello'), (error: AgentSessionError) => error.code === 'dialog_open');
    await assert.rejects(asking.answerDialog(3), (error: AgentSessionError) => error.code === 'invalid_input' && error.field === 'option');
    await asking.answerDialog(1);
    assert.equal(asking.dialog(), undefined);
    await settled(asking);
    assert.equal(asking.conversation.last('agent')?.content, 'permission granted');
    await assert.rejects(asking.answerDialog(1), (error: AgentSessionError) => error.code === 'no_dialog');

    const steps: string[] = [];
    asking.conversation.on('permission', ({ outcome, title, chosen }) => steps.push(`${outcome}:${title}:${chosen ?? '-'}`));
    await asking.sendMessage('write more notes');
    await eventually('the second permission dialog', () => asking.dialog() !== undefined, 20_000);
    await clock.advance(59_999);
    assert.ok(asking.dialog(), 'still waiting just before the timeout');
    await clock.advance(1);
    assert.equal(asking.dialog(), undefined);
    assert.deepEqual(steps, ['requested:Write notes.txt:-', 'timed_out:Write notes.txt:Reject'], 'the denial is an event');
    await settled(asking);
    assert.equal(asking.conversation.last('agent')?.content, 'permission refused');
    const tool = asking.conversation.activity('call-1');
    assert.equal(tool?.type === 'tool_call' && tool.status, 'failed', 'the agent saw the denial');
  });

  test('tool calls, plans and thoughts become activities, placed after the message they follow', async () => {
    const session = await start({ permissions: 'allow' });
    const seen: string[] = [];
    session.conversation.on('activity', ({ activity }) => seen.push(`${activity.type}:${activity.id}`));
    await session.sendMessage('write notes');
    await settled(session);
    assert.deepEqual(seen, [
      'plan:plan-1',
      'thought:thought-1',
      'thought:thought-1',
      'tool_call:call-1',
      'tool_call:call-1',
      'tool_call:call-1',
    ]);
    const activities = session.conversation.activities().map(({ time, ...rest }) => rest);
    assert.deepEqual(activities, [
      {
        type: 'plan',
        id: 'plan-1',
        afterMessage: 0,
        entries: [
          { content: 'Write notes.txt', priority: 'high', status: 'in_progress' },
          { content: 'Report back', priority: 'low', status: 'pending' },
        ],
      },
      { type: 'thought', id: 'thought-1', afterMessage: 0, text: 'The user wants a file.' },
      {
        type: 'tool_call',
        id: 'call-1',
        afterMessage: 0,
        title: 'Write notes.txt',
        kind: 'edit',
        status: 'completed',
        content: 'wrote 12 bytes',
        locations: ['notes.txt'],
      },
    ]);
    assert.deepEqual(
      session.conversation.messages().map((m) => m.content),
      ['write notes', 'permission granted'],
      'thoughts and tool output are not part of the reply',
    );
  });

  test('permission requests follow the policy: reject by default, allow when told', async () => {
    const rejecting = await start();
    await rejecting.sendMessage('write notes');
    await settled(rejecting);
    assert.equal(rejecting.conversation.last('agent')?.content, 'permission refused');
    const allowing = await start({ permissions: 'allow' });
    await allowing.sendMessage('write notes');
    await settled(allowing);
    assert.equal(allowing.conversation.last('agent')?.content, 'permission granted');
  });

  test('Ctrl-C as raw input cancels the turn; other raw input is refused naming the field', async () => {
    const session = await start();
    await session.sendMessage('slow answer');
    // Mid-turn: the first of the ten chunks (100 ms apart) is in.
    await eventually('the first chunk', () => /^chunk 1 /.test(session.conversation.last('agent')?.content ?? ''));
    await session.sendRaw('\x03');
    await settled(session);
    const reply = session.conversation.last('agent')?.content ?? '';
    assert.match(reply, /^chunk 1 /);
    assert.doesNotMatch(reply, /chunk 10/, 'the turn stopped early');
    await assert.rejects(
      session.sendRaw('ls\r'),
      (error: AgentSessionError) => error.code === 'not_supported' && error.field === 'content',
    );
  });

  test('an agent that exits mid-turn is reported once, as a fatal error, and refuses input', async () => {
    const session = await start();
    const errors: string[] = [];
    session.conversation.on('agent_error', (event) => errors.push(`${event.fatal}:${event.message}`));
    const exited = new Promise((resolve) => session.conversation.once('exit', resolve));
    await session.sendMessage('crash');
    await exited;
    assert.deepEqual(errors, ['true:the agent exited (code 3)']);
    assert.equal(session.conversation.status, 'stable');
    await assert.rejects(session.sendMessage('hello'), (error: AgentSessionError) => error.code === 'agent_exited');
  });

  test('an agent that closes its output but keeps running is stopped: the turn never reads as over, input is refused', async () => {
    const session = await start();
    const statuses: string[] = [];
    const errors: string[] = [];
    session.conversation.on('status_change', (event) => statuses.push(event.exited ? 'exited' : event.status));
    session.conversation.on('agent_error', (event) => errors.push(`${event.fatal}:${event.message}`));
    const exited = new Promise((resolve) => session.conversation.once('exit', resolve));
    await session.sendMessage('mute');
    await eventually('the turn to end or the agent to be stopped', () => session.conversation.status === 'stable' || errors.length > 0);
    await assert.rejects(session.sendMessage('hello'), (error: AgentSessionError) => error.code === 'agent_exited');
    await exited;
    assert.deepEqual(statuses, ['running', 'exited'], 'no stable in between: it could not take a message');
    assert.deepEqual(errors, [
      'false:the agent closed its output while still running; stopping it',
      'true:the agent exited (signal SIGTERM)',
    ]);
    assert.deepEqual(
      session.conversation.messages().map((m) => m.content),
      ['mute', 'going quiet'],
      'nothing was recorded after the output closed',
    );
  });

  test('an agent that is not an ACP agent fails to start with a clear error', async () => {
    await assert.rejects(
      AcpAgentSession.start({ command: process.execPath, args: ['-e', 'process.exit(2)'] }),
      (error: AgentSessionError) => error.code === 'start_failed' && /exited during initialize \(code 2\)/.test(error.message),
    );
    await assert.rejects(
      AcpAgentSession.start({ command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60000)'], handshakeTimeoutMs: 300 }),
      (error: AgentSessionError) => error.code === 'start_failed' && /did not answer initialize within 300 ms/.test(error.message),
    );
  });
});
