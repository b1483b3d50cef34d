import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sampleCredential } from '../contract.js';
import { generateEncryptionKey } from '../encryption.js';
import { CredentialsError } from '../errors.js';
import { FileCredentialStore } from './fileCredentialStore.js';
import { processStart } from './processStart.js';

const root = await mkdtemp(join(tmpdir(), 'credentials-claims-'));
after(() => rm(root, { recursive: true, force: true }));
let counter = 0;
const freshDir = () => join(root, `d${++counter}`);
/** When this process started; undefined without /proc (macOS). */
const ownStart = await processStart(process.pid);

const claimsIn = async (directory: string) => (await readdir(directory)).filter((name) => name.startsWith('.lock-')).sort();

/** The PID of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

/** A process that runs until the test kills it. */
async function liveChild(): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
  await new Promise((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    pid: child.pid!,
    async stop() {
      child.kill();
      await exited;
    },
  };
}

const inUse = (pattern: RegExp) => (error: unknown) =>
  error instanceof CredentialsError && error.code === 'in_use' && pattern.test(error.message);

describe('the claim a file store holds on its directory', () => {
  test('an open store holds one claim file, mode 0600, naming its process and host; close removes it', async () => {
    const directory = freshDir();
    const store = await FileCredentialStore.open({ directory });
    const [claim, ...more] = await claimsIn(directory);
    assert.deepEqual(more, []);
    assert.match(claim!, new RegExp(`^\\.lock-${process.pid}-[0-9a-f]{12}$`));
    assert.equal((await stat(join(directory, claim!))).mode & 0o777, 0o600);
    const owner = JSON.parse(await readFile(join(directory, claim!), 'utf8'));
    assert.deepEqual([owner.pid, owner.host, owner.purpose], [process.pid, hostname(), 'store']);
    assert.deepEqual(owner.started, ownStart, 'when the process started, where /proc tells');
    await store.close();
    assert.deepEqual(await claimsIn(directory), []);
  });

  test('rekey refuses while another store has the directory open, naming it, and writes nothing', async () => {
    const directory = freshDir();
    const key = generateEncryptionKey();
    const store = await FileCredentialStore.open({ directory, encryption: { key } });
    await store.put(sampleCredential('openai-a'));
    const before = await readFile(join(directory, 'openai-a.json'), 'utf8');
    const other = await FileCredentialStore.open({ directory, encryption: { key } });
    await assert.rejects(
      store.rekey(generateEncryptionKey()),
      inUse(new RegExp(`in use by a credential store in process ${process.pid} on host .*\\.lock-${process.pid}-.*cannot rekey it`)),
    );
    assert.equal(await readFile(join(directory, 'openai-a.json'), 'utf8'), before);
    assert.equal(store.keyId, other.keyId, 'the store still writes with its key');
    await store.put(sampleCredential('openai-b'));
    await other.close();
    const report = await store.rekey(generateEncryptionKey());
    assert.equal(report.rekeyed, 2);
    await store.close();
  });

  test('a store does not open while a rekey runs, and opens once it is over', async () => {
    const directory = freshDir();
    const store = await FileCredentialStore.open({ directory });
    for (const id of ['openai-a', 'openai-b']) await store.put(sampleCredential(id));
    const during: unknown[] = [];
    await store.rekey(generateEncryptionKey(), {
      onProgress: async () => {
        const outcome = await FileCredentialStore.open({ directory }).catch((error: unknown) => error);
        if (outcome instanceof FileCredentialStore) await outcome.close();
        during.push(outcome);
      },
    });
    assert.equal(during.length, 2);
    for (const outcome of during) assert.ok(inUse(/in use by a rekey in process \d+ .*cannot open it: wait for the rekey/)(outcome));
    assert.deepEqual((await claimsIn(directory)).length, 1, 'the refused stores left no claim behind');
    const after = await FileCredentialStore.open({ directory });
    await after.close();
    await store.close();
  });

  test('claims of dead processes, and of an earlier process with this PID, are stale: ignored and removed', async () => {
    const directory = freshDir();
    const store = await FileCredentialStore.open({ directory });
    await store.put(sampleCredential('openai-a'));
    const dead = await deadPid();
    const since = new Date().toISOString();
    await writeFile(
      join(directory, `.lock-${dead}-000000000000`),
      JSON.stringify({ pid: dead, host: hostname(), since, purpose: 'rekey' }),
    );
    const earlier = { pid: process.pid, host: hostname(), since, purpose: 'store' };
    await writeFile(join(directory, `.lock-${process.pid}-111111111111`), JSON.stringify(earlier));
    await writeFile(join(directory, '.lock-junk'), 'not a claim');
    const opened = await FileCredentialStore.open({ directory });
    await opened.close();
    assert.equal((await store.rekey(generateEncryptionKey())).rekeyed, 1);
    const left = await claimsIn(directory);
    assert.equal(left.includes(`.lock-${dead}-000000000000`), false, "the dead process's claim is removed");
    assert.equal(left.includes(`.lock-${process.pid}-111111111111`), false, "the earlier process's claim is removed");
    assert.equal(left.includes('.lock-junk'), true, 'a file that is no claim is left alone');
    assert.equal(left.length, 2, "and the store's own claim");
    await store.close();
  });

  test('a claim whose PID now runs a process of another start time or boot is stale (a reused PID); the holder itself is live', {
    skip: ownStart === undefined ? 'no /proc: claims are judged by their PID alone' : false,
  }, async () => {
    const directory = freshDir();
    const store = await FileCredentialStore.open({ directory });
    const holder = await liveChild();
    after(() => holder.stop());
    const started = (await processStart(holder.pid))!;
    const claimOf = (name: string, recorded: object) =>
      writeFile(
        join(directory, name),
        JSON.stringify({ pid: holder.pid, host: hostname(), since: new Date().toISOString(), purpose: 'store', ...recorded }),
      );
    const live = `.lock-${holder.pid}-333333333333`;
    const otherStart = `.lock-${holder.pid}-444444444444`;
    const otherBoot = `.lock-${holder.pid}-555555555555`;
    const older = `.lock-${holder.pid}-666666666666`;
    await claimOf(otherStart, { started: { ...started, start_ticks: started.start_ticks - 1 } });
    await claimOf(otherBoot, { started: { ...started, boot_id: '00000000-0000-4000-8000-000000000000' } });
    await claimOf(live, { started });
    await assert.rejects(store.rekey(generateEncryptionKey()), inUse(new RegExp(`in process ${holder.pid} .*${live}`)));
    const left = await claimsIn(directory);
    assert.equal(left.includes(otherStart), false, 'a claim of a process that started at another time is removed');
    assert.equal(left.includes(otherBoot), false, 'a claim from an earlier boot is removed');
    assert.equal(left.includes(live), true, "the live holder's claim stays");
    // A claim without a start time (an older version wrote it) is judged by its PID alone: that PID runs.
    await rm(join(directory, live));
    await claimOf(older, {});
    await assert.rejects(store.rekey(generateEncryptionKey()), inUse(new RegExp(`in process ${holder.pid} .*${older}`)));
    await rm(join(directory, older));
    assert.equal((await store.rekey(generateEncryptionKey())).key_id, store.keyId);
    await store.close();
  });

  test('a claim from another host cannot be checked: it counts as live, and the error says which file to remove', async () => {
    const directory = freshDir();
    const store = await FileCredentialStore.open({ directory });
    const claim = join(directory, '.lock-4242-222222222222');
    await writeFile(claim, JSON.stringify({ pid: 4242, host: 'elsewhere.example', since: '2026-01-01T00:00:00.000Z', purpose: 'store' }));
    await assert.rejects(
      store.rekey(generateEncryptionKey()),
      inUse(/process 4242 on host elsewhere\.example since 2026-01-01T00:00:00\.000Z .*\.lock-4242-222222222222.*remove its lock file/),
    );
    await rm(claim);
    await store.rekey(generateEncryptionKey());
    await store.close();
  });

  test('a directory this process may not write to opens without a claim, and refuses a rekey', {
    skip: process.getuid?.() === 0,
  }, async () => {
    const directory = freshDir();
    const writer = await FileCredentialStore.open({ directory });
    await writer.put(sampleCredential('openai-a'));
    await writer.close();
    await chmod(directory, 0o500);
    try {
      const reader = await FileCredentialStore.open({ directory });
      assert.equal((await reader.get('openai-a'))?.status, 'active');
      assert.deepEqual(await claimsIn(directory), []);
      await assert.rejects(reader.rekey(generateEncryptionKey()), { code: 'store_failed' });
      await reader.close();
    } finally {
      await chmod(directory, 0o700);
    }
  });
});
