/**
 * `switchyard keys create|list|revoke` against a running gateway: the secret printed once, the
 * JSON option, the management key from the environment or a file, and clear errors.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import { startTestGateway } from '../../test/startTestGateway.js';
import { main } from '../cli.js';
import { keysCommand } from './keysCommand.js';

const MANAGEMENT_KEY = 'keys-command-management-key';
const { gateway, dir } = await startTestGateway(
  (d) => `
port: 0
auth-dir: ${d}/auths
remote-management: { secret-key: ${MANAGEMENT_KEY} }
providers:
  alpha: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
`,
);

async function run(args: string[], env: NodeJS.ProcessEnv = { SWITCHYARD_MANAGEMENT_KEY: MANAGEMENT_KEY }) {
  let stdout = '';
  let stderr = '';
  const code = await keysCommand([...args, '--url', gateway.url], {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env,
  });
  return { code, stdout, stderr };
}

describe('switchyard keys', () => {
  test('create prints the secret once; the key works; list shows it without the secret; revoke ends it', async () => {
    const created = await run([
      'create',
      '--name',
      'ci-bot',
      '--tenant',
      'ci',
      '--model',
      'demo-*',
      '--rpm',
      '30',
      '--budget',
      '1000:tokens:daily',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const secret = /secret: (sk-sy-\S+)/.exec(created.stdout)?.[1];
    const id = /created (ck_[0-9a-f]+)/.exec(created.stdout)?.[1];
    assert.ok(secret && id, created.stdout);
    assert.match(created.stderr, /shown this once/);
    const client = new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: 'demo-model', messages: [{ role: 'user', content: 'hi' }] });
    const listed = await run(['list']);
    assert.equal(listed.code, 0);
    assert.match(listed.stdout, new RegExp(`${id}\\s+ci-bot\\s+ci\\s+live\\s+demo-\\*\\s+30 rpm\\s+\\d+/1000 tokens daily`));
    assert.ok(!listed.stdout.includes(secret));
    const json = await run(['list', '--json', '--tenant', 'ci']);
    assert.deepEqual(
      JSON.parse(json.stdout).keys.map((k: { id: string }) => k.id),
      [id],
    );
    const revoked = await run(['revoke', id]);
    assert.equal(revoked.stdout, `revoked ${id} (ci-bot)\n`);
    await assert.rejects(
      client.chat.completions.create({ model: 'demo-model', messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => error instanceof OpenAI.AuthenticationError,
    );
    assert.match((await run(['list', '--revoked'])).stdout, new RegExp(`${id}.*revoked`));
  });

  test('the management key from a file; create --json answers the API body', async () => {
    const file = join(dir, 'management.key');
    await writeFile(file, `${MANAGEMENT_KEY}\n`, { mode: 0o600 });
    const created = await run(['create', '--name', 'from-file', '--json', '--key-file', file], {});
    assert.equal(created.code, 0, created.stderr);
    const body = JSON.parse(created.stdout);
    assert.match(body.secret, /^sk-sy-/);
    assert.equal(body.key.name, 'from-file');
  });

  test('clear errors: no key, a wrong key, bad flags, an unreachable gateway, a refused body', async () => {
    await assert.rejects(run(['list'], {}), /set SWITCHYARD_MANAGEMENT_KEY/);
    const wrong = await run(['list'], { SWITCHYARD_MANAGEMENT_KEY: 'nope' });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /refused the management key \(401\)/);
    await assert.rejects(run(['create', '--name', 'x', '--budget', 'lots']), /--budget is LIMIT:UNIT:PERIOD/);
    await assert.rejects(run(['create']), /needs --name/);
    await assert.rejects(run(['revoke']), /one key id/);
    const bad = await run(['create', '--name', 'x', '--tenant', 'no spaces']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /422 validation_failed \(tenant\)/);
    const missing = await run(['revoke', 'ck_0000000000000000']);
    assert.match(missing.stderr, /404 not_found: no client key has the id/);
    // A port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    let stderr = '';
    const code = await keysCommand(['list', '--url', `http://127.0.0.1:${port}`], {
      stdout: () => undefined,
      stderr: (text) => (stderr += text),
      env: { SWITCHYARD_MANAGEMENT_KEY: MANAGEMENT_KEY },
    });
    assert.equal(code, 1);
    assert.equal(stderr, `switchyard keys: cannot reach the gateway at http://127.0.0.1:${port}: ECONNREFUSED\n`);
  });

  test('switchyard keys --help, and usage errors through the CLI exit 2', async () => {
    let out = '';
    let err = '';
    const io = { stdout: (t: string) => (out += t), stderr: (t: string) => (err += t) };
    assert.equal(await main(['keys', '--help'], io), 0);
    assert.match(out, /switchyard keys create --name NAME/);
    assert.equal(await main(['keys', 'rotate'], io), 2);
    assert.match(err, /unknown keys command "rotate"/);
    assert.equal(await main(['keys', 'list', '--bogus'], io), 2);
    assert.match(err, /Unknown option '--bogus'/);
    out = '';
    assert.equal(await main(['--help'], io), 0);
    assert.match(out, /switchyard keys create\|list\|revoke/);
  });
});
