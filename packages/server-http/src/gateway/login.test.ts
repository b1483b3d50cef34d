import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { signInProviders, startFakeAuth } from '../../test/signInFixture.js';
import { main } from '../cli.js';

const auth = await startFakeAuth();
const dir = await mkdtemp(join(tmpdir(), 'switchyard-login-'));
after(async () => {
  await auth.stop();
  await rm(dir, { recursive: true, force: true });
});

const configPath = join(dir, 'config.yaml');
// A relative auth-dir: it is read from the config file's directory.
await writeFile(
  configPath,
  `auth-dir: ./auths
providers:
${signInProviders(auth)}`,
);

/** Runs the CLI, collecting what it prints; `signals` stands in for the process. */
async function run(args: string[], signals = new EventEmitter()) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) }, signals);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

const credentialFiles = async () => (await readdir(join(dir, 'auths'))).filter((name) => name.endsWith('.json') && !name.startsWith('.'));

test('--help explains login and its options', async () => {
  const { code, stdout } = await run(['--help']);
  assert.equal(code, 0);
  assert.match(stdout, /switchyard login <flow> \[--config/);
  assert.match(stdout, /--mode builder-id\|identity-center/);
  assert.match(stdout, /--start-url URL --region REGION/);
});

test('login: prints the code and URL, polls through pending, writes the credential with mode 0600', async () => {
  auth.script = ['authorization_pending', 'authorization_pending', 'token'];
  const { code, stdout } = await run(['login', 'acme', '--config', configPath, '--priority', '2']);
  assert.equal(code, 0, stdout);
  const userCode = /\n {2}(USER-\d+)\n/.exec(stdout)?.[1];
  assert.ok(userCode, stdout);
  assert.match(stdout, new RegExp(`open\\n {2}${auth.url}/activate\\n`));
  const id = /credential (acme-[0-9a-f]{8})/.exec(stdout)?.[1];
  assert.ok(id, stdout);
  const file = join(dir, 'auths', `${id}.json`);
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  const stored = JSON.parse(await readFile(file, 'utf8'));
  assert.equal(stored.provider, 'acme');
  assert.equal(stored.priority, 2);
  assert.equal(stored.oauth.flow, 'acme');
  assert.doesNotMatch(stdout, /access-dc/, 'the token is never printed');
});

test('login: a denied sign-in and an expired code exit 1 with a clear message, writing nothing', async () => {
  const before = await credentialFiles();
  auth.script = ['authorization_pending', 'access_denied'];
  const denied = await run(['login', 'acme', '--config', configPath]);
  assert.equal(denied.code, 1);
  assert.match(denied.stderr, /sign-in failed: the sign-in was denied/);
  auth.script = ['expired_token'];
  const expired = await run(['login', 'acme', '--config', configPath]);
  assert.equal(expired.code, 1);
  assert.match(expired.stderr, /the code expired before it was approved; run switchyard login again/);
  assert.deepEqual(await credentialFiles(), before);
});

test('login: Ctrl-C cancels a pending sign-in (exit 130)', async () => {
  auth.script = ['await_user'];
  const signals = new EventEmitter();
  const out: string[] = [];
  const running = main(['login', 'acme', '--config', configPath], { stdout: (t) => out.push(t), stderr: () => {} }, signals);
  await eventually('the code to be printed', () => out.join('').includes('Ctrl-C cancels'));
  signals.emit('SIGINT');
  assert.equal(await running, 130);
  assert.equal(signals.listenerCount('SIGINT'), 0, 'the handler is removed');
});

test('login cloud-coding-assistant: identity-center flags pick the start URL and region; bad flags are usage errors', async () => {
  auth.script = ['token'];
  const ok = await run([
    'login',
    'cloud-coding-assistant',
    '--config',
    configPath,
    '--mode',
    'identity-center',
    '--start-url',
    'https://my-org.awsapps.com/start',
    '--region',
    'eu-west-1',
  ]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(auth.calls('/oidc/eu-west-1/device_authorization').at(-1)!.body.startUrl, 'https://my-org.awsapps.com/start');
  assert.match(ok.stdout, /credential cloud-[0-9a-f]{8} \(provider cloud, identity-center my-org\.awsapps\.com\)/);

  const missing = await run(['login', 'cloud-coding-assistant', '--config', configPath, '--mode', 'identity-center']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--start-url: /);
  const stray = await run(['login', 'acme', '--config', configPath, '--region', 'eu-west-1']);
  assert.equal(stray.code, 2);
  assert.match(stray.stderr, /--region: unknown key/);
  const unknown = await run(['login', 'nope', '--config', configPath]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /no sign-in flow named "nope" \(flows: code-assistant, cloud-coding-assistant, acme\)/);
});
