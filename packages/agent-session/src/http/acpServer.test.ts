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
