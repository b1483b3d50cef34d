/**
 * `FileCredentialStore.rekey` against other processes on the same auth
 * directory: a store open in another process makes it refuse, naming that
 * process; a rekey running in another process keeps stores (and so other
 * rekeys) out; and a rekey SIGKILLed half-way leaves every file readable
 * with the old or the new key, and a rerun with the same keys finishes it.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '@switchyard/test-support';
import { sampleCredential } from '../src/contract.js';
import { CredentialsError, FileCredentialStore, generateEncryptionKey, parseEncryptionKey } from '../src/index.js';

const root = await mkdtemp(join(tmpdir(), 'credentials-rekey-'));
after(() => rm(root, { recursive: true, force: true }));
const USER = fileURLToPath(new URL('./fixtures/authDirUser.ts', import.meta.url));
const COUNT = 20;

/** A child process using the directory (see fixtures/authDirUser.ts), with its output lines so far. */
function directoryUser(args: string[]): { child: ChildProcess; lines: string[]; exited: Promise<void> } {
  const child = spawn(process.execPath, ['--conditions=@switchyard/source', '--import=tsx', USER, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk) => {
    buffered += chunk;
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    lines.push(...complete);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  after(() => child.kill('SIGKILL'));
  return { child, lines, exited };
}

async function killed(user: { child: ChildProcess; exited: Promise<void> }): Promise<void> {
  user.child.kill('SIGKILL');
  await user.exited;
}

/** A directory of COUNT credentials under `key`; answers their tokens by id. */
async function populated(key: string): Promise<{ directory: string; tokens: Map<string, string> }> {
  const directory = await mkdtemp(join(root, 'auths-'));
  const store = await FileCredentialStore.open({ directory, encryption: { key } });
  const tokens = new Map<string, string>();
  for (let i = 0; i < COUNT; i++) {
    const id = `openai-${String(i).padStart(2, '0')}`;
    tokens.set(id, `sk-${id}-secret`);
    await store.put(sampleCredential(id, { token: tokens.get(id)! }));
  }
  await store.close();
  return { directory, tokens };
}

const keyIdsOf = async (directory: string) => {
  const names = (await readdir(directory)).filter((name) => name.endsWith('.json') && !name.startsWith('.'));
  return Promise.all(names.map(async (name) => JSON.parse(await readFile(join(directory, name), 'utf8')).encryption.key_id as string));
};

const inUseBy = (pid: number, what: string) => (error: unknown) =>
  error instanceof CredentialsError && error.code === 'in_use' && error.message.includes(`in use by ${what} in process ${pid} on host`);

describe('rekeying an auth directory other processes use', () => {
  test('a store open in another process makes rekey refuse, naming it; once that process is killed, the rekey runs', {
    timeout: 60_000,
  }, async () => {
    const oldKey = generateEncryptionKey();
    const { directory } = await populated(oldKey);
    const gateway = directoryUser(['hold', directory, oldKey]);
    await eventually('the other process to open the store', () => gateway.lines.includes('ready'), 30_000);

    const store = await FileCredentialStore.open({ directory, encryption: { key: oldKey } });
    const newKey = generateEncryptionKey();
    await assert.rejects(store.rekey(newKey), inUseBy(gateway.child.pid!, 'a credential store'));
    assert.deepEqual(new Set(await keyIdsOf(directory)), new Set([parseEncryptionKey(oldKey).id]), 'nothing was rewritten');

    await killed(gateway);
    const report = await store.rekey(newKey);
    assert.deepEqual([report.rekeyed, report.already_current], [COUNT, 0]);
    await store.close();
    assert.deepEqual(
      (await readdir(directory)).filter((name) => name.startsWith('.lock-')),
      [],
      "the dead process's claim was removed, and the store's own on close",
    );
  });

  test('a rekey in another process keeps stores and other rekeys out; killed half-way, it leaves old or new files, and a rerun finishes', {
    timeout: 60_000,
  }, async () => {
    const oldKey = generateEncryptionKey();
    const newKey = generateEncryptionKey();
    const [oldId, newId] = [parseEncryptionKey(oldKey).id, parseEncryptionKey(newKey).id];
    const { directory, tokens } = await populated(oldKey);
    const rekey = directoryUser(['rekey', directory, oldKey, newKey, '7']);
    await eventually('the rekey to stop half-way', () => rekey.lines.includes('paused'), 30_000);

    await assert.rejects(FileCredentialStore.open({ directory, encryption: { key: oldKey } }), inUseBy(rekey.child.pid!, 'a rekey'));
    const second = directoryUser(['rekey', directory, oldKey, newKey, '0']);
    await second.exited;
    assert.match(second.lines.join('\n'), new RegExp(`^error in_use .*in use by a rekey in process ${rekey.child.pid} on host`, 'm'));

    await killed(rekey);
    const keyIds = await keyIdsOf(directory);
    assert.deepEqual([keyIds.filter((id) => id === newId).length, keyIds.filter((id) => id === oldId).length], [7, COUNT - 7]);
    const both = await FileCredentialStore.open({ directory, encryption: { key: newKey, previousKeys: [oldKey] } });
    const read = await both.list();
    assert.deepEqual(new Map(read.map((c) => [c.id, c.token])), tokens, 'every file reads whole, with the old key or the new');
    await both.close();

    // The same command again: the configured key is still the old one.
    const rerun = directoryUser(['rekey', directory, oldKey, newKey, '0']);
    await rerun.exited;
    const done = rerun.lines.find((line) => line.startsWith('done '));
    assert.ok(done, rerun.lines.join('\n'));
    assert.deepEqual(JSON.parse(done.slice('done '.length)), { key_id: newId, rekeyed: COUNT - 7, already_current: 7, skipped: [] });
    const onlyNew = await FileCredentialStore.open({ directory, encryption: { key: newKey } });
    assert.deepEqual(new Map((await onlyNew.list()).map((c) => [c.id, c.token])), tokens);
    await onlyNew.close();
  });
});
