import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
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

test('yard agent serve serves a real terminal program over HTTP until asked to stop', { timeout: 60_000 }, async () => {
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
    env: {},
    cwd: repo.root,
    stopSignal,
  };
  const running = main(['agent', 'serve', '--port', '0', '--output', 'json', '--', 'bash', '--norc', '--noprofile'], io);
  const deadline = Date.now() + 30_000;
  while (!stdout.includes('"url"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
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
