import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram, workspaceProgram } from '@switchyard/test-support';
import OpenAI from 'openai';

const bin = fileURLToPath(new URL('../../packages/server-http/src/bin.ts', import.meta.url));
const exampleConfig = fileURLToPath(new URL('./config.yaml', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'example-gateway-'));
let server: ChildProcess | undefined;
after(async () => {
  server?.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
});

test('switchyard config check accepts the quick-start config', async () => {
  const { stdout } = await runWorkspaceProgram(bin, ['config', 'check', exampleConfig]);
  assert.match(stdout, /valid \(2 providers, listening on 127\.0\.0\.1:8317\)/);
});

test('the quick-start gateway answers the official openai client, plain and streamed, and stops cleanly', { timeout: 60_000 }, async () => {
  // The example config as written, on free ports so the test can run next to anything.
  const config = (await readFile(exampleConfig, 'utf8')).replace('port: 8317', 'port: 0').replace('port: 9090', 'port: 0');
  const path = join(dir, 'config.yaml');
  await writeFile(path, config);
  const gateway = workspaceProgram(bin);
  server = spawn(process.execPath, [...gateway.args, 'serve', '--config', path], {
    cwd: dir,
    env: { ...process.env, ...gateway.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    server!.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (match && /^dashboard on /m.test(out)) {
        assert.match(
          out,
          new RegExp(`dashboard on ${match[1]}/dashboard \\(sign in with the management key, remote-management\\.secret-key in `),
        );
        assert.ok(!out.includes('local-demo-management-key-change-me'), 'the key itself is never printed');
        resolve(match[1]!);
      }
    });
    server!.once('exit', (code) => reject(new Error(`gateway exited with ${code}`)));
  });
  const client = new OpenAI({ apiKey: 'unused-the-example-is-open-on-loopback', baseURL: `${url}/v1`, maxRetries: 0 });
  const completion = await client.chat.completions.create({
    model: 'demo-model',
    messages: [{ role: 'user', content: 'Hi from the README' }],
  });
  assert.match(completion.choices[0]?.message.content ?? '', /You said: Hi from the README/);
  const stream = await client.chat.completions.create({
    model: 'demo-model',
    messages: [{ role: 'user', content: 'and streamed' }],
    stream: true,
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  assert.match(text, /You said: and streamed/);
  const models = [];
  for await (const model of client.models.list()) models.push(model.id);
  assert.deepEqual(models, ['demo-model']);
  const exited = new Promise<number | null>((resolve) => server!.once('exit', resolve));
  server.kill('SIGTERM');
  assert.equal(await exited, 0);
  server = undefined;
});

test('the embedding example in the server-http README is embed.ts, and it fails over when a provider cools down', {
  timeout: 60_000,
}, async () => {
  const source = await readFile(fileURLToPath(new URL('./embed.ts', import.meta.url)), 'utf8');
  const readme = await readFile(fileURLToPath(new URL('../../packages/server-http/README.md', import.meta.url)), 'utf8');
  assert.ok(readme.includes(source.trim()), 'packages/server-http/README.md must show embed.ts verbatim');
  const { stdout } = await runWorkspaceProgram(new URL('./embed.ts', import.meta.url), [], { cwd: dir });
  assert.match(stdout, /^first: .*You said: hello\nsecond: .*You said: still there\?\n$/);
});

test('the websocket example in docs/websocket.md is websocket.ts: credential messages acknowledged, a response streamed', {
  timeout: 60_000,
}, async () => {
  const source = await readFile(fileURLToPath(new URL('./websocket.ts', import.meta.url)), 'utf8');
  const guide = await readFile(fileURLToPath(new URL('../../docs/websocket.md', import.meta.url)), 'utf8');
  assert.ok(guide.includes(source.trim()), 'docs/websocket.md must show websocket.ts verbatim');
  const { stdout } = await runWorkspaceProgram(new URL('./websocket.ts', import.meta.url), [], { cwd: dir });
  assert.match(
    stdout,
    /^auth\.ack: demo-key at revision 1\nhello-1 response\.completed: .*You said: hello over a websocket\ndeleted: demo-key\n$/,
  );
});
