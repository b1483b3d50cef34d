// Dialogs over HTTP, with a real program on a real terminal: a node script that opens with a
// trust menu (arrow keys and Enter, like the agents built on terminal UI toolkits) and then echoes
// what it is told. A message typed into the menu would be lost; the server must refuse it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type AgentSessionServer, startAgentSessionServer } from '../agentSessionServer.js';
import { DIALOG_AGENT } from './testing/dialogAgent.js';

let server: AgentSessionServer;
before(async () => {
  server = await startAgentSessionServer({ command: process.execPath, args: ['-e', DIALOG_AGENT], port: 0, stableWindowMs: 300 });
});
after(() => server.close());

type Status = { status: string; dialog?: { text: string; options: string[] } };
const status = async () => (await (await fetch(`${server.url}/status`)).json()) as Status;
const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const screen = (await (await fetch(`${server.url}/screen`)).json()) as { lines: string[] };
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await status())} ${screen.lines.filter(Boolean).join(' | ')}`);
}

/** The first `status_change` frame a new `/events` subscriber gets. */
async function firstStatusEvent(): Promise<Status> {
  const response = await fetch(`${server.url}/events`);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the event stream ended');
      buffer += value;
      const frame = /event: status_change\ndata: (.*)\n/.exec(buffer);
      if (frame) return JSON.parse(frame[1]!) as Status;
    }
  } finally {
    await reader.cancel();
  }
}

test('a dialog is reported, refuses user messages, is answered through POST /dialog, and the next message goes through', async () => {
  const shown = await until('the dialog', async () => {
    const s = await status();
    return s.status === 'stable' && s.dialog ? s : undefined;
  });
  const expected = {
    text: 'Fake Agent 1.0\n\nDo you trust the files in this folder?',
    options: ['Yes, proceed', 'Yes, and remember this folder', 'No, exit'],
  };
  assert.deepEqual(shown.dialog, expected);
  assert.deepEqual((await firstStatusEvent()).dialog, expected, '/events carries the dialog');

  const refused = await post('/message', { content: 'hello', type: 'user' });
  assert.equal(refused.status, 409);
  const body = (await refused.json()) as { error: { code: string; message: string; details: { dialog: unknown } } };
  assert.equal(body.error.code, 'conflict');
  assert.match(body.error.message, /dialog/);
  assert.deepEqual(body.error.details.dialog, expected);
  const { messages } = (await (await fetch(`${server.url}/messages`)).json()) as { messages: { role: string }[] };
  assert.equal(messages.filter((m) => m.role === 'user').length, 0, 'the refused message is not recorded');

  const outOfRange = await post('/dialog', { option: 4 });
  assert.equal(outOfRange.status, 422);
  assert.equal(((await outOfRange.json()) as { error: { details: { field: string } } }).error.details.field, 'option');

  // Raw keys still pass: move the selection to the last option (one key at a time, as a menu reads
  // a burst as one unknown key), then pick the second one.
  for (const option of [2, 3]) {
    assert.equal((await post('/message', { content: '\u001b[B', type: 'raw' })).status, 200);
    await until(`the selection on option ${option}`, async () => {
      const { lines } = (await (await fetch(`${server.url}/screen`)).json()) as { lines: string[] };
      return lines.some((l) => l.startsWith(`❯ ${option}.`)) ? true : undefined;
    });
  }
  const answered = await post('/dialog', { option: 2 });
  assert.deepEqual([answered.status, await answered.json()], [200, { ok: true }]);
  await until('the dialog to go', async () => {
    const s = await status();
    return s.status === 'stable' && !s.dialog ? s : undefined;
  });
  const { lines } = (await (await fetch(`${server.url}/screen`)).json()) as { lines: string[] };
  assert.ok(lines.includes('Trusted and remembered.'), `option 2 was picked: ${lines.slice(0, 3).join(' | ')}`);

  const none = await post('/dialog', { option: 1 });
  assert.equal(none.status, 409);
  assert.equal(((await none.json()) as { error: { code: string } }).error.code, 'conflict');

  const sent = await post('/message', { content: 'hello', type: 'user' });
  assert.equal(sent.status, 200);
  const reply = await until('the reply', async () => {
    const s = await status();
    if (s.status !== 'stable') return undefined;
    const { messages: all } = (await (await fetch(`${server.url}/messages`)).json()) as { messages: { role: string; content: string }[] };
    return all.at(-1)?.role === 'agent' && all.at(-2)?.role === 'user' ? all : undefined;
  });
  assert.deepEqual(reply.at(-2), { ...reply.at(-2), role: 'user', content: 'hello' });
  assert.equal(reply.at(-1)!.content, 'You said: hello');
});

test('a permission prompt in the middle of a turn: reported, a message refused, answered with its letter, the reply completes', async () => {
  await until('stable', async () => ((await status()).status === 'stable' ? true : undefined));
  assert.equal((await post('/message', { content: 'run ls -la', type: 'user' })).status, 200);
  const asked = await until('the permission prompt', async () => {
    const s = await status();
    return s.status === 'stable' && s.dialog ? s : undefined;
  });
  assert.deepEqual(asked.dialog, { text: 'Allow command ls -la?', options: ['Yes', 'No'] });

  const refused = await post('/message', { content: 'never mind', type: 'user' });
  assert.equal(refused.status, 409);
  assert.deepEqual(((await refused.json()) as { error: { details: { dialog: unknown } } }).error.details.dialog, asked.dialog);

  assert.equal((await post('/dialog', { option: 1 })).status, 200);
  const messages = await until('the reply', async () => {
    const s = await status();
    if (s.status !== 'stable' || s.dialog) return undefined;
    const { messages: all } = (await (await fetch(`${server.url}/messages`)).json()) as { messages: { role: string; content: string }[] };
    return all.at(-1)?.content.includes('Ran ls -la: ok') ? all : undefined;
  });
  assert.deepEqual(
    messages.filter((m) => m.role === 'user').map((m) => m.content),
    ['hello', 'run ls -la'],
    'the refused message was neither typed nor recorded',
  );
});
