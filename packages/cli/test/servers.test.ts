import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import type { CliIO } from '../src/io.js';
import { main } from '../src/main.js';
import { type TempRepo, tempRepo, yard } from './helpers.js';

let repo: TempRepo;
before(async () => {
  repo = await tempRepo();
});
after(() => repo.cleanup());

test('yard serve needs a port, and refuses bad ones', async () => {
  const none = await yard(['serve', '--output', 'json'], { cwd: repo.root });
  assert.equal(none.code, 2);
  assert.match(JSON.parse(none.stderr).error.message, /--http <port>, --grpc <port> or both/);
  assert.equal((await yard(['serve', '--http', '70000'], { cwd: repo.root })).code, 2);
});

/** Runs `yard agent serve <options> --output json -- bash` in process until `stop`; resolves once it printed its URL. */
async function agentServe(options: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stop!: (signal: string) => void;
  const stopSignal = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const io: CliIO = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: () => undefined,
    readStdin: async () => Buffer.alloc(0),
    stdinIsTTY: false,
    env,
    cwd: repo.root,
    stopSignal,
  };
  const running = main(['agent', 'serve', '--port', '0', ...options, '--output', 'json', '--', 'bash', '--norc', '--noprofile'], io);
  await eventually('the server to start', () => stdout.includes('"url"'), 30_000);
  return { stdout, stop, running };
}

test('yard agent serve serves a real terminal program over HTTP until asked to stop', { timeout: 60_000 }, async () => {
  const { stdout, stop, running } = await agentServe([]);
  const { url, command } = JSON.parse(stdout) as { url: string; command: string };
  assert.equal(command, 'bash');
  const status = await fetch(`${url}/status`);
  assert.equal(status.status, 200);
  assert.match(JSON.stringify(await status.json()), /running|stable/);
  stop('SIGINT');
  assert.equal(await running, 0, 'a stop closes the server and exits 0');
  await assert.rejects(fetch(`${url}/status`), 'the server is closed');

  const usage = await yard(['agent', 'serve', '--transport', 'ssh', '--', 'echo'], { cwd: repo.root });
  assert.equal(usage.code, 2, 'an unknown transport is a usage error');
});

test('yard agent serve --api-key-env guards the API with the key from the environment', { timeout: 60_000 }, async () => {
  const { stdout, stop, running } = await agentServe(['--api-key-env', 'AGENT_KEY'], { AGENT_KEY: 'sk-agent-test' });
  const { url, api_key_required } = JSON.parse(stdout) as { url: string; api_key_required: boolean };
  assert.equal(api_key_required, true);
  assert.doesNotMatch(stdout, /sk-agent-test/, 'the key is never printed');
  assert.equal((await fetch(`${url}/status`)).status, 401);
  assert.equal((await fetch(`${url}/status`, { headers: { authorization: 'Bearer sk-agent-test' } })).status, 200);
  stop('SIGINT');
  assert.equal(await running, 0);

  const unset = await yard(['agent', 'serve', '--port', '0', '--api-key-env', 'NO_SUCH_AGENT_KEY_VAR', '--', 'bash'], { cwd: repo.root });
  assert.equal(unset.code, 2, 'an unset variable is a usage error, before anything starts');
  assert.match(unset.stderr, /environment variable NO_SUCH_AGENT_KEY_VAR is not set/);
});
