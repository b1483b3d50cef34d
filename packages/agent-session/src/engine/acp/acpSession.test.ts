// The ACP client against a scripted agent built on the official ACP SDK.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FakeScheduler } from '@switchyard/runtime';
import { eventually } from '@switchyard/test-support';
import type { AgentSession } from '../agentSession.js';
import type { AgentSessionError } from '../errors.js';
import { AcpAgentSession, type AcpSessionOptions } from './acpSession.js';
import { type JsonRpcError, JsonRpcPeer } from './jsonRpc.js';

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

    const errors: string[] = [];
    asking.conversation.on('agent_error', ({ message }) => errors.push(message));
    await asking.sendMessage('write more notes');
    await eventually('the second permission dialog', () => asking.dialog() !== undefined, 20_000);
    await clock.advance(59_999);
    assert.ok(asking.dialog(), 'still waiting just before the timeout');
    await clock.advance(1);
    assert.equal(asking.dialog(), undefined);
    assert.deepEqual(errors, ['the permission request "Write notes.txt" was not answered within 60 s: denied']);
    await settled(asking);
    assert.equal(asking.conversation.last('agent')?.content, 'permission refused');
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
    await new Promise((resolve) => setTimeout(resolve, 250));
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

describe('JsonRpcPeer', () => {
  function pair() {
    const aToB = new PassThrough();
    const bToA = new PassThrough();
    const errors: string[] = [];
    const a = new JsonRpcPeer(bToA, aToB, {
      onRequest: async () => 'unused',
      onNotification: () => {},
      onProtocolError: (message) => errors.push(message),
    });
    return { a, aToB, bToA, errors };
  }

  test('matches responses to requests, turns error responses into JsonRpcError, and survives garbage', async () => {
    const { a, aToB, bToA, errors } = pair();
    const requests: { id: number; method: string }[] = [];
    aToB.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) requests.push(JSON.parse(line));
    });
    const first = a.request('one', {});
    const second = a.request('two', {});
    await new Promise((resolve) => setImmediate(resolve));
    bToA.write('not json\n');
    bToA.write(`${JSON.stringify({ jsonrpc: '2.0', id: requests[1]!.id, error: { code: -32000, message: 'nope' } })}\n`);
    bToA.write(`${JSON.stringify({ jsonrpc: '2.0', id: requests[0]!.id, result: { fine: true } })}\n`);
    assert.deepEqual(await first, { fine: true });
    await assert.rejects(second, (error: JsonRpcError) => error.rpcCode === -32000 && error.message === 'nope');
    assert.deepEqual(errors, ['not JSON: not json']);
  });

  test('pending requests fail when the other side closes its output', async () => {
    const { a, bToA } = pair();
    const waiting = a.request('never', {});
    bToA.end();
    await assert.rejects(waiting, /closed its output/);
    await assert.rejects(a.request('later', {}), /closed its output/);
  });
});
