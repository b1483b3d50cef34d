// The same HTTP surface over the ACP transport, with the scripted ACP agent.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openEvents } from '@switchyard/test-support';
import { type AgentSessionServer, startAgentSessionServer } from '../agentSessionServer.js';

const FAKE_ACP = fileURLToPath(new URL('../../test/fixtures/fake-acp-agent.mjs', import.meta.url));
let server: AgentSessionServer | undefined;
after(() => server?.close());

const postTo = (url: string, body: unknown) =>
  fetch(`${url}/message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('--transport acp: status, messages, events, raw cancel, and no screen', { timeout: 60_000 }, async () => {
  server = await startAgentSessionServer({
    transport: 'acp',
    command: process.execPath,
    args: [FAKE_ACP],
    port: 0,
    acpPermissions: 'allow',
  });
  const post = (body: unknown) => postTo(server!.url, body);
  assert.deepEqual(await (await fetch(`${server.url}/status`)).json(), { status: 'stable', agent_type: 'acp', transport: 'acp' });
  const events = await openEvents(`${server.url}/events`);
  assert.equal((await post({ content: 'hello', type: 'user' })).status, 200);
  await events.waitFor((e) => e.event === 'message_update' && e.data.content === 'You said: hello', 'the streamed reply');
  await events.waitFor(
    (e) => e.event === 'status_change' && e.data.status === 'stable' && e.data.transport === 'acp' && events.events.at(-1) === e,
    'stable',
  );
  const { messages } = (await (await fetch(`${server.url}/messages`)).json()) as { messages: { role: string; content: string }[] };
  assert.deepEqual(
    messages.map((m) => [m.role, m.content]),
    [
      ['user', 'hello'],
      ['agent', 'You said: hello'],
    ],
  );
  const raw = await post({ content: 'ls\r', type: 'raw' });
  assert.equal(raw.status, 422);
  assert.match(((await raw.json()) as { error: { message: string } }).error.message, /can only be/);
  assert.equal((await post({ content: '\u0003', type: 'raw' })).status, 200);
  assert.equal((await fetch(`${server.url}/screen`)).status, 404);
  events.close();
});

test('a long reply streamed in thousands of small chunks reaches a live subscriber whole', { timeout: 60_000 }, async () => {
  const long = await startAgentSessionServer({ transport: 'acp', command: process.execPath, args: [FAKE_ACP], port: 0 });
  try {
    const events = await openEvents(`${long.url}/events`);
    await events.waitFor((e) => e.event === 'status_change', 'the replay');
    // 3000 chunks of 10 characters: re-sending the growing message whole for each would be 45 MB.
    assert.equal((await postTo(long.url, { content: 'long 3000' })).status, 200);
    const reply = '0123456789'.repeat(3000);
    await events.waitFor((e) => e.event === 'message_update' && e.data.content === reply, 'the whole reply, live');
    await events.waitFor((e) => e.event === 'status_change' && e.data.status === 'stable' && events.events.at(-1) === e, 'stable');
    events.close();
  } finally {
    await long.close();
  }
});

test('--acp-permissions ask: the tool call, plan, thought and permission request are events; POST /dialog answers; a replay has them all', {
  timeout: 60_000,
}, async () => {
  const asking = await startAgentSessionServer({
    transport: 'acp',
    command: process.execPath,
    args: [FAKE_ACP],
    port: 0,
    acpPermissions: 'ask',
  });
  try {
    const events = await openEvents(`${asking.url}/events`);
    await events.waitFor((e) => e.event === 'status_change', 'the replay');
    assert.equal((await postTo(asking.url, { content: 'write notes' })).status, 200);
    await events.waitFor((e) => e.event === 'plan' && (e.data.entries as unknown[]).length === 2, 'the plan');
    await events.waitFor((e) => e.event === 'agent_thought' && e.data.text === 'The user wants a file.', 'the thought');
    const pending = await events.waitFor((e) => e.event === 'tool_call' && e.data.status === 'pending', 'the tool call');
    assert.deepEqual(pending.data.locations, ['notes.txt']);
    assert.equal(pending.data.after_message, 0, 'it follows the user message');
    const request = await events.waitFor((e) => e.event === 'permission' && e.data.outcome === 'requested', 'the permission request');
    assert.deepEqual(request.data.options, ['Allow', 'Reject']);
    assert.equal(request.data.tool_call_id, 'call-1');
    const status = (await (await fetch(`${asking.url}/status`)).json()) as { status: string; dialog?: { options: string[] } };
    assert.equal(status.status, 'running', 'status keeps its two values');
    assert.deepEqual(status.dialog?.options, ['Allow', 'Reject']);
    assert.equal((await postTo(asking.url, { content: 'hello' })).status, 409, 'a message is refused while the agent asks');
    const answer = await fetch(`${asking.url}/dialog`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ option: 1 }),
    });
    assert.equal(answer.status, 200);
    await events.waitFor((e) => e.event === 'permission' && e.data.outcome === 'answered' && e.data.chosen === 'Allow', 'the answer');
    await events.waitFor((e) => e.event === 'tool_call' && e.data.status === 'completed' && e.data.content === 'wrote 12 bytes', 'done');
    await events.waitFor((e) => e.event === 'message_update' && e.data.content === 'permission granted', 'the reply');
    events.close();

    const replay = await openEvents(`${asking.url}/events`);
    await replay.waitFor((e) => e.event === 'status_change', 'the replay');
    assert.deepEqual(
      replay.events.map((e) => `${e.event}${e.event === 'permission' ? `:${e.data.outcome}` : ''}`),
      [
        'message_update',
        'message_update',
        'plan',
        'agent_thought',
        'permission:requested',
        'permission:answered',
        'tool_call',
        'status_change',
      ],
    );
    replay.close();
  } finally {
    await asking.close();
  }
});
