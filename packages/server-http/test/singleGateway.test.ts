/**
 * One gateway process on its auth-dir (no cluster), as `switchyard serve`
 * runs it: a device sign-in pending when the process is killed is answered
 * `interrupted` after the restart (its status is kept in
 * `auth-dir/.sign-ins`), and `switchyard credentials rekey` refuses the
 * directory while the gateway has it open, naming the process, as the
 * gateway refuses to start while a rekey runs.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { generateEncryptionKey, parseEncryptionKey } from '@switchyard/credentials';
import { parse } from 'yaml';
import { startGatewayNodes } from './gatewayProcesses.js';
import { signInProviders, startFakeAuth } from './signInFixture.js';
import { switchyard } from './switchyardCommand.js';

const KEY = 'single-gateway-management-key';
const OLD_KEY = generateEncryptionKey();
const NEW_KEY = generateEncryptionKey();

// biome-ignore lint/suspicious/noExplicitAny: response bodies are probed field by field
type Body = Record<string, any>;

describe('a single gateway process and its auth-dir', async () => {
  const auth = await startFakeAuth();
  after(() => auth.stop());
  const { nodes } = await startGatewayNodes({
    count: 1,
    config: () => ({
      'remote-management': { 'secret-key': KEY },
      auth: { encryption: { enabled: true, key: OLD_KEY }, refresh: { enabled: false } },
      ...(parse(`providers:\n${signInProviders(auth)}`) as Record<string, unknown>),
    }),
  });
  const gateway = nodes[0]!;
  const authDir = gateway.config['auth-dir'] as string;

  async function call(method: string, path: string): Promise<{ status: number; body: Body }> {
    const response = await fetch(`${gateway.url}${path}`, { method, headers: { authorization: `Bearer ${KEY}` } });
    return { status: response.status, body: (await response.json()) as Body };
  }

  test('a sign-in pending when the gateway is killed is answered as interrupted once it is back', { timeout: 60_000 }, async () => {
    auth.script = ['await_user'];
    const started = await call('POST', '/v0/oauth/acme/sessions');
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const id = started.body.session_id as string;
    assert.equal((await call('GET', `/v0/oauth/sessions/${id}`)).body.status, 'pending');
    const file = await readFile(join(authDir, '.sign-ins', `${id}.json`), 'utf8');
    const deviceCodes = auth.calls('/rfc/token').map((r) => r.body.device_code as string);
    for (const secret of deviceCodes) assert.equal(file.includes(secret), false, 'the device code stays in memory');

    await gateway.restart();
    const after = await call('GET', `/v0/oauth/sessions/${id}`);
    assert.equal(after.status, 200, JSON.stringify(after.body));
    assert.deepEqual([after.body.status, after.body.error?.code], ['failed', 'interrupted']);
  });

  test('rekey refuses the directory of the running gateway, naming its process, and runs once the gateway is stopped', {
    timeout: 60_000,
  }, async () => {
    const config = gateway.configPath;
    const refused = await switchyard(['credentials', 'rekey', '--config', config, '--new-key-env', 'K'], { K: NEW_KEY });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, new RegExp(`rekey failed \\(in_use\\): .*in use by a credential store in process ${gateway.pid} on host`));
    assert.match(refused.stderr, /stop the gateway/);

    await gateway.kill('SIGKILL');
    const done = await switchyard(['credentials', 'rekey', '--config', config, '--new-key-env', 'K'], { K: NEW_KEY });
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, new RegExp(`to key ${parseEncryptionKey(NEW_KEY).id}`));
    assert.deepEqual(
      (await readdir(authDir)).filter((name) => name.startsWith('.lock-')),
      [],
      "the killed gateway's claim is gone",
    );
  });

  test('the gateway refuses to start while a rekey holds its auth-dir, and says so', { timeout: 60_000 }, async () => {
    // A rekey claim of a live process on this host: this test's own.
    const claim = join(authDir, '.lock-rekey-under-test');
    await writeFile(claim, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString(), purpose: 'rekey' }));
    const serve = await switchyard(['serve', '--config', gateway.configPath]);
    assert.equal(serve.code, 1, serve.stderr);
    assert.match(serve.stderr, new RegExp(`^switchyard: the auth directory .* is in use by a rekey in process ${process.pid} on host`));
    assert.match(serve.stderr, /wait for the rekey to finish/);
  });
});
