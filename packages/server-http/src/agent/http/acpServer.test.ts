// The same HTTP surface over the ACP transport, with the scripted ACP agent.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openEvents } from '../../../test/sseClient.js';
import { type AgentSessionServer, startAgentSessionServer } from '../agentSessionServer.js';

const FAKE_ACP = fileURLToPath(new URL('../../../test/fixtures/fake-acp-agent.mjs', import.meta.url));
let server: AgentSessionServer | undefined;
after(() => server?.close());

test('--transport acp: status, messages, events, raw cancel, and no screen', { timeout: 60_000 }, async () => {
  server = await startAgentSessionServer({
    transport: 'acp',
    command: process.execPath,
    args: [FAKE_ACP],
    port: 0,
    acpPermissions: 'allow',
  });
  const post = (body: unknown) =>
    fetch(`${server!.url}/message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
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
