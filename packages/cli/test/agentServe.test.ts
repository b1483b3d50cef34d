// `yard agent serve`'s flags against a real bash on a real terminal: terminal size, allowed
// origins, the initial prompt, the state file (saved, restored on restart), the agent type and
// custom rules; and `yard agent attach` on the server's live screen.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '@switchyard/test-support';
import type { CliIO } from '../src/io.js';
import { main } from '../src/main.js';
import { yard } from './helpers.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yard-agent-serve-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const BASH = ['bash', '--norc', '--noprofile'];

/** Runs `yard agent serve <options> --output json -- <command>` in process until stopped; resolves once it printed its URL. */
async function agentServe(options: string[], command: string[] = BASH) {
  let stdout = '';
  let stderr = '';
  let stop!: (signal: string) => void;
  const stopSignal = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const io: CliIO = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    readStdin: async () => Buffer.alloc(0),
    stdinIsTTY: false,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PS1: '$ ' },
    cwd: dir,
    stopSignal,
  };
  const running = main(['agent', 'serve', '--port', '0', ...options, '--output', 'json', '--', ...command], io);
  // A refused flag ends yard at once: say why, rather than wait for a URL that never comes.
  const early = await Promise.race([running, eventually('the server to start', () => stdout.includes('"url"'), 30_000)]);
  if (typeof early === 'number') throw new Error(`yard agent serve exited ${early} before serving: ${stderr.trim()}`);
  const info = JSON.parse(stdout) as { url: string; agent_type: string };
  return {
    ...info,
    async stop() {
      stop('SIGINT');
      assert.equal(await running, 0);
    },
  };
}

type Message = { id: number; role: string; content: string };
const messagesOf = async (url: string) => ((await (await fetch(`${url}/messages`)).json()) as { messages: Message[] }).messages;
const statusOf = async (url: string) => (await (await fetch(`${url}/status`)).json()) as { status: string; agent_type: string };
const send = (url: string, content: string) =>
  fetch(`${url}/message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content }) });

/** Waits until the agent is stable and its last message is a reply containing `text`. */
async function untilReply(url: string, text: string): Promise<Message[]> {
  let messages: Message[] = [];
  await eventually(
    `a reply with ${text}`,
    async () => {
      messages = await messagesOf(url);
      return messages.at(-1)?.role === 'agent' && messages.at(-1)!.content.includes(text) && (await statusOf(url)).status === 'stable';
    },
    30_000,
  );
  return messages;
}

test('--term-width and --term-height size the terminal', { timeout: 60_000 }, async () => {
  const server = await agentServe(['--term-width', '97', '--term-height', '31']);
  const screen = (await (await fetch(`${server.url}/screen`)).json()) as { cols: number; rows: number };
  assert.deepEqual([screen.cols, screen.rows], [97, 31]);
  await server.stop();
  const bad = await yard(['agent', 'serve', '--term-width', 'wide', '--', 'bash'], { cwd: dir });
  assert.equal(bad.code, 2, 'a width that is not a number is a usage error');
});

test('--allowed-origin lets that origin call the API from a browser, and no other', { timeout: 60_000 }, async () => {
  const server = await agentServe(['--allowed-origin', 'https://app.example']);
  const allowed = await fetch(`${server.url}/status`, { headers: { origin: 'https://app.example' } });
  assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://app.example');
  const post = (origin: string) =>
    fetch(`${server.url}/message`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ content: '\u0003', type: 'raw' }),
    });
  assert.equal((await post('https://app.example')).status, 200);
  assert.equal((await post('https://evil.example')).status, 403);
  await server.stop();
  const bad = await yard(['agent', 'serve', '--allowed-origin', 'app.example/path', '--', 'bash'], { cwd: dir });
  assert.equal(bad.code, 2, 'a value that is not an origin is a usage error');
});

test('--initial-prompt is the first user message, sent once the agent is ready', { timeout: 60_000 }, async () => {
  const server = await agentServe(['--initial-prompt', 'echo initial-$((6 * 7))']);
  const messages = await untilReply(server.url, 'initial-42');
  assert.deepEqual(
    messages.filter((m) => m.role === 'user'),
    [{ ...messages.find((m) => m.role === 'user')!, content: 'echo initial-$((6 * 7))' }],
  );
  await server.stop();
});

test('--state-file saves the history (0600, atomically replaced) and restores it on restart', { timeout: 90_000 }, async () => {
  const stateFile = join(dir, 'state.json');
  const first = await agentServe(['--state-file', 'state.json']);
  await eventually('bash to be ready', async () => (await statusOf(first.url)).status === 'stable', 30_000);
  assert.equal((await send(first.url, 'echo first-$((1 + 1))')).status, 200);
  const before = await untilReply(first.url, 'first-2');
  await first.stop();
  assert.equal((await stat(stateFile)).mode & 0o777, 0o600);
  const saved = JSON.parse(await readFile(stateFile, 'utf8')) as { version: number; messages: Message[] };
  assert.equal(saved.version, 1);
  assert.deepEqual(
    saved.messages.map((m) => [m.role, m.content]),
    before.map((m) => [m.role, m.content]),
  );

  const second = await agentServe(['--state-file', stateFile]);
  await eventually('bash to be ready', async () => (await statusOf(second.url)).status === 'stable', 30_000);
  const restored = await messagesOf(second.url);
  assert.deepEqual(
    restored.slice(0, before.length).map((m) => [m.role, m.content]),
    before.map((m) => [m.role, m.content]),
    'the earlier conversation comes first',
  );
  assert.deepEqual(
    restored.map((m) => m.id),
    restored.map((_, index) => index),
  );
  assert.equal((await send(second.url, 'echo second-$((2 + 1))')).status, 200);
  await untilReply(second.url, 'second-3');
  await second.stop();
  const after = JSON.parse(await readFile(stateFile, 'utf8')) as { messages: Message[] };
  assert.deepEqual(
    after.messages.filter((m) => m.role === 'user').map((m) => m.content),
    ['echo first-$((1 + 1))', 'echo second-$((2 + 1))'],
  );

  await writeFile(join(dir, 'notes.txt'), 'my notes');
  const wrong = await yard(['agent', 'serve', '--port', '0', '--state-file', 'notes.txt', '--', 'bash'], { cwd: dir });
  assert.equal(wrong.code, 2, 'a file that is not a state file is a usage error');
  assert.match(wrong.stderr, /is not an agent state file/);
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), 'my notes', 'and left alone');
});

test('--type sets the agent type; without it the type is inferred from the command name', { timeout: 60_000 }, async () => {
  const typed = await agentServe(['--type', 'Codex']);
  assert.equal(typed.agent_type, 'codex');
  assert.equal((await statusOf(typed.url)).agent_type, 'codex');
  await typed.stop();

  const aider = join(dir, 'aider');
  await symlink((await import('node:child_process')).execFileSync('sh', ['-c', 'command -v bash']).toString().trim(), aider);
  const inferred = await agentServe([], [aider, '--norc', '--noprofile']);
  assert.equal((await statusOf(inferred.url)).agent_type, 'aider');
  await inferred.stop();
  const plain = await agentServe([]);
  assert.equal(plain.agent_type, 'generic');
  await plain.stop();

  const unknown = await yard(['agent', 'serve', '--type', 'nonsense', '--', 'bash'], { cwd: dir });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown agent type nonsense/);
});

test('--rules applies message rules of your own, as the custom type; bad rules are a usage error', { timeout: 60_000 }, async () => {
  const rulesFile = join(dir, 'rules.json');
  await writeFile(rulesFile, JSON.stringify({ extraction: 'scrollback', input_box: 'none', chrome: ['^noise-\\d+$'] }));
  const server = await agentServe(['--rules', 'rules.json']);
  assert.equal(server.agent_type, 'custom');
  await eventually('bash to be ready', async () => (await statusOf(server.url)).status === 'stable', 30_000);
  assert.equal((await send(server.url, 'echo noise-$((1 + 1)); echo kept-$((2 + 2))')).status, 200);
  const messages = await untilReply(server.url, 'kept-4');
  assert.equal(messages.at(-1)!.content, 'kept-4', 'the chrome line is stripped');
  await server.stop();

  await writeFile(rulesFile, JSON.stringify({ busy: ['(unclosed'] }));
  const bad = await yard(['agent', 'serve', '--rules', rulesFile, '--', 'bash'], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /busy\.0: not a valid regular expression/);
});

test('yard agent attach mirrors the live screen and forwards keystrokes until Ctrl-]', { timeout: 60_000 }, async () => {
  const server = await agentServe([]);
  await eventually('bash to be ready', async () => (await statusOf(server.url)).status === 'stable', 30_000);
  const keys = new PassThrough();
  let restored = false;
  let shown = '';
  const io: CliIO = {
    stdout: (text) => {
      shown += text;
    },
    stderr: () => undefined,
    readStdin: async () => Buffer.alloc(0),
    stdinIsTTY: true,
    env: {},
    cwd: dir,
    openKeys: () => ({
      keys,
      restore: () => {
        restored = true;
      },
    }),
  };
  const attached = main(['agent', 'attach', server.url], io);
  await eventually('the first screen', () => shown.includes('\x1b[2J'), 30_000);
  keys.write('echo attached-$((40 + 2))\r');
  await eventually('the keys to reach bash and its answer to come back', () => shown.includes('attached-42'), 30_000);
  keys.write('\x1d');
  assert.equal(await attached, 0, 'Ctrl-] detaches');
  assert.ok(restored, 'the terminal is put back');
  assert.match(shown, /detached/);
  const { messages } = (await (await fetch(`${server.url}/messages`)).json()) as { messages: Message[] };
  assert.equal(messages.filter((m) => m.role === 'user').length, 0, 'keystrokes are raw input, not messages');
  await server.stop();

  assert.equal((await yard(['agent', 'attach', 'ftp://example'], { cwd: dir })).code, 2);
});

test('--acp-permissions ask: a permission request of an ACP agent is a dialog answered through POST /dialog', {
  timeout: 60_000,
}, async () => {
  const fakeAcp = fileURLToPath(new URL('../../agent-session/test/fixtures/fake-acp-agent.mjs', import.meta.url));
  const server = await agentServe(['--transport', 'acp', '--acp-permissions', 'ask'], [process.execPath, fakeAcp]);
  await eventually('the ACP session', async () => (await statusOf(server.url)).status === 'stable', 30_000);
  assert.equal((await send(server.url, 'write notes')).status, 200);
  let dialog: unknown;
  await eventually(
    'the permission dialog',
    async () => {
      dialog = ((await statusOf(server.url)) as { dialog?: unknown }).dialog;
      return dialog !== undefined;
    },
    30_000,
  );
  assert.deepEqual(dialog, { text: 'The agent asks for permission: Write notes.txt', options: ['Allow', 'Reject'] });
  assert.equal((await send(server.url, 'hello')).status, 409);
  const answered = await fetch(`${server.url}/dialog`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ option: 1 }),
  });
  assert.equal(answered.status, 200);
  await untilReply(server.url, 'permission granted');
  await server.stop();
});

test('--acp-permission-timeout: an unanswered permission request is denied after that many seconds; a bad value is a usage error', {
  timeout: 60_000,
}, async () => {
  const fakeAcp = fileURLToPath(new URL('../../agent-session/test/fixtures/fake-acp-agent.mjs', import.meta.url));
  const refused = await yard(['agent', 'serve', '--transport', 'acp', '--acp-permission-timeout', '0', '--', process.execPath, fakeAcp], {
    cwd: dir,
  });
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--acp-permission-timeout: expected an integer from 1 to 86400/);
  const server = await agentServe(
    ['--transport', 'acp', '--acp-permissions', 'ask', '--acp-permission-timeout', '1'],
    [process.execPath, fakeAcp],
  );
  await eventually('the ACP session', async () => (await statusOf(server.url)).status === 'stable', 30_000);
  assert.equal((await send(server.url, 'write notes')).status, 200);
  await untilReply(server.url, 'permission refused');
  await server.stop();
});

test('yard agent serve --host 0.0.0.0 without a key is refused (exit 2, naming --host and how to set a key); --insecure serves it', {
  timeout: 60_000,
}, async () => {
  let stderr = '';
  const io: CliIO = {
    stdout: () => undefined,
    stderr: (text) => {
      stderr += text;
    },
    readStdin: async () => Buffer.alloc(0),
    stdinIsTTY: false,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    cwd: dir,
  };
  const code = await main(['agent', 'serve', '--port', '0', '--host', '0.0.0.0', '--output', 'json', '--', ...BASH], io);
  assert.equal(code, 2, stderr);
  const error = (JSON.parse(stderr) as { error: { code: string; message: string; details?: { field?: string } } }).error;
  assert.equal(error.code, 'invalid_argument');
  assert.equal(error.details?.field, 'host');
  assert.match(error.message, /--api-key-env/);
  const open = await agentServe(['--host', '0.0.0.0', '--insecure']);
  await open.stop();
});
