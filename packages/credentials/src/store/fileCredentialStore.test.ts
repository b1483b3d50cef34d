import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { runCredentialStoreContract, runQuotaStoreContract, sampleCredential } from '../contract.js';
import { generateEncryptionKey, parseEncryptionKey } from '../encryption.js';
import { CredentialsError } from '../errors.js';
import type { StoreChange } from './credentialStore.js';
import { FileCredentialStore } from './fileCredentialStore.js';
import { FileQuotaStore } from './fileQuotaStore.js';

const root = await mkdtemp(join(tmpdir(), 'credentials-files-'));
after(() => rm(root, { recursive: true, force: true }));
let counter = 0;
const freshDir = () => join(root, `d${++counter}`);
const KEY = generateEncryptionKey();

runCredentialStoreContract(
  'FileCredentialStore (plaintext)',
  async () => {
    const directory = freshDir();
    return { store: await FileCredentialStore.open({ directory }), reopen: () => FileCredentialStore.open({ directory }) };
  },
  { durable: true },
);

runCredentialStoreContract(
  'FileCredentialStore (encrypted)',
  async () => {
    const directory = freshDir();
    const open = () => FileCredentialStore.open({ directory, encryption: { key: KEY } });
    return { store: await open(), reopen: open };
  },
  { durable: true },
);

runQuotaStoreContract(
  'FileQuotaStore',
  async () => {
    const path = join(freshDir(), '.quota.json');
    await mkdir(join(path, '..'), { recursive: true });
    return { store: await FileQuotaStore.open(path), reopen: () => FileQuotaStore.open(path) };
  },
  { durable: true },
);

describe('FileCredentialStore on disk', () => {
  test('creates the directory 0700 and writes every file 0600, leaving no temp files', async () => {
    const directory = join(freshDir(), 'nested', 'auths');
    const store = await FileCredentialStore.open({ directory });
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.put(sampleCredential(`openai-${i}`))));
    assert.equal((await stat(directory)).mode & 0o777, 0o700);
    const names = await readdir(directory);
    assert.equal(names.length, 21);
    assert.equal(names.filter((name) => name.startsWith('.lock-')).length, 1, "the store's claim on the directory");
    for (const name of names) assert.equal((await stat(join(directory, name))).mode & 0o777, 0o600, name);
    await store.close();
    assert.equal((await readdir(directory)).length, 20, 'close removes the claim');
  });

  test('files() lists names, sizes and times without reading secrets', async () => {
    const directory = freshDir();
    const store = await FileCredentialStore.open({ directory });
    await store.put(sampleCredential('openai-a'));
    await writeFile(join(directory, 'notes.txt'), 'not a credential');
    const when = new Date('2026-03-04T05:06:07Z');
    await utimes(join(directory, 'openai-a.json'), when, when);
    const [file, ...rest] = await store.files();
    assert.deepEqual(rest, []);
    assert.deepEqual([file!.id, file!.name, file!.modified_at], ['openai-a', 'openai-a.json', when.toISOString()]);
    assert.equal(file!.size, (await stat(join(directory, 'openai-a.json'))).size);
    await store.close();
  });

  test('reads hand-written files: provider from the file name, epoch expiry, file times as timestamps', async () => {
    const directory = freshDir();
    await mkdir(directory);
    await writeFile(join(directory, 'openai-team.json'), JSON.stringify({ type: 'api_key', token: 'sk-team', priority: 2 }));
    await writeFile(join(directory, 'misc.json'), JSON.stringify({ type: 'api_key', token: 'sk-x', provider: 'anthropic' }));
    await writeFile(
      join(directory, 'code-assistant-me.json'),
      JSON.stringify({ type: 'oauth', token: 't', provider: 'code-assistant', expires_at: 1_900_000_000 }),
    );
    const when = new Date('2026-02-03T04:05:06Z');
    await utimes(join(directory, 'openai-team.json'), when, when);
    const store = await FileCredentialStore.open({ directory });
    const [assistant, misc, team] = await store.list();
    assert.deepEqual(
      [team!.id, team!.provider, team!.priority, team!.status, team!.token],
      ['openai-team', 'openai', 2, 'active', 'sk-team'],
    );
    assert.equal(team!.updated_at, when.toISOString());
    assert.equal(misc!.provider, 'anthropic', 'a provider field wins over the file name');
    assert.equal(assistant!.expires_at, new Date(1_900_000_000_000).toISOString());
    await store.close();
  });

  test('malformed files come back in status error with a reason, and never quote the file', async () => {
    const directory = freshDir();
    await mkdir(directory);
    const secret = 'sk-DO-NOT-LEAK-0123456789';
    const files: Record<string, string> = {
      'openai-badjson.json': `{"type":"api_key","token":"${secret}"`,
      'openai-array.json': `["${secret}"]`,
      'openai-notoken.json': JSON.stringify({ type: 'api_key', priority: 3 }),
      'openai-badtype.json': JSON.stringify({ type: 'password', token: secret }),
      'openai-future.json': JSON.stringify({ format_version: 9, type: 'api_key', token: secret }),
      'openai-badprio.json': JSON.stringify({ type: 'api_key', token: secret, priority: 'high' }),
      'openai-good.json': JSON.stringify({ type: 'api_key', token: 'fine' }),
    };
    for (const [name, text] of Object.entries(files)) await writeFile(join(directory, name), text);
    await mkdir(join(directory, 'openai-dir.json'));
    execFileSync('mkfifo', [join(directory, 'openai-fifo.json')]);
    await writeFile(join(directory, 'openai-huge.json'), Buffer.alloc(2048, 0x20));
    const store = await FileCredentialStore.open({ directory, maxFileBytes: 1024 });
    const byId = new Map((await store.list()).map((c) => [c.id, c]));
    const expected: Record<string, RegExp> = {
      'openai-badjson': /not valid JSON/,
      'openai-array': /not a JSON object/,
      'openai-notoken': /token/,
      'openai-badtype': /type/,
      'openai-future': /format_version 9 is not supported/,
      'openai-badprio': /priority/,
      'openai-dir': /not a regular file/,
      'openai-fifo': /not a regular file/,
      'openai-huge': /larger than 1024 bytes/,
    };
    for (const [id, message] of Object.entries(expected)) {
      const record = byId.get(id);
      assert.ok(record, id);
      assert.equal(record.status, 'error', id);
      assert.equal(record.token, '', id);
      assert.match(record.status_message!, message, `${id}: ${record.status_message}`);
      assert.ok(!JSON.stringify(record).includes(secret), id);
    }
    assert.equal(byId.get('openai-notoken')!.priority, 3, 'usable metadata of a broken file is kept');
    assert.equal(byId.get('openai-good')!.status, 'active');
    await store.close();
  });

  test('ids are confined to the directory', async () => {
    const store = await FileCredentialStore.open({ directory: freshDir() });
    for (const id of ['../escape', 'a/b', '..', '.hidden', 'a\\b', 'nul\u0000byte', '']) {
      await assert.rejects(store.get(id), (e: CredentialsError) => e.code === 'path_not_allowed' && e.field === 'id', id);
      await assert.rejects(store.delete(id), (e: CredentialsError) => e.code === 'path_not_allowed' || e.code === 'invalid_credential');
      await assert.rejects(store.put({ ...sampleCredential('x'), id }), CredentialsError);
    }
    assert.deepEqual(await readdir(root).then((names) => names.filter((n) => n === 'escape.json')), []);
    await store.close();
  });

  test('symlinks are followed inside the directory (Kubernetes secret mounts) and refused out of it', async () => {
    const directory = freshDir();
    const outside = freshDir();
    await mkdir(join(directory, '..data'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(directory, '..data', 'openai-mounted.json'), JSON.stringify({ type: 'api_key', token: 'inside' }));
    await symlink(join('..data', 'openai-mounted.json'), join(directory, 'openai-mounted.json'));
    await writeFile(join(outside, 'stolen.json'), JSON.stringify({ type: 'api_key', token: 'outside-secret' }));
    await symlink(join(outside, 'stolen.json'), join(directory, 'openai-escape.json'));
    await symlink(join(directory, 'missing.json'), join(directory, 'openai-dangling.json'));
    const store = await FileCredentialStore.open({ directory });
    const byId = new Map((await store.list()).map((c) => [c.id, c]));
    assert.equal(byId.get('openai-mounted')!.token, 'inside');
    assert.equal(byId.get('openai-escape')!.status, 'error');
    assert.match(byId.get('openai-escape')!.status_message!, /outside the auth directory/);
    assert.equal(byId.get('openai-escape')!.token, '');
    assert.match(byId.get('openai-dangling')!.status_message!, /does not exist/);
    await store.close();
  });

  test('temp files are never listed, and stale ones are removed on open', async () => {
    const directory = freshDir();
    await mkdir(directory);
    const stale = join(directory, '.tmp-openai-1.json-123-abc');
    const fresh = join(directory, '.tmp-openai-2.json-456-def');
    await writeFile(stale, '{"torn":');
    await writeFile(fresh, '{"torn":');
    const old = new Date(Date.now() - 3_600_000);
    await utimes(stale, old, old);
    const store = await FileCredentialStore.open({ directory });
    assert.deepEqual(await store.list(), []);
    await store.close();
    assert.deepEqual((await readdir(directory)).sort(), ['.tmp-openai-2.json-456-def']);
  });

  test('watch reports changes made by others to the directory', { timeout: 30_000 }, async () => {
    const directory = freshDir();
    const store = await FileCredentialStore.open({ directory });
    const seen: StoreChange[] = [];
    const stop = store.watch((change) => seen.push(change));
    await store.watching();
    await writeFile(join(directory, 'openai-ext.json'), JSON.stringify({ type: 'api_key', token: 'x' }));
    await eventually(
      'the external write to be seen',
      () => seen.some((c) => c.origin === 'external' && c.type === 'auth.upsert' && c.id === 'openai-ext'),
      20_000,
    );
    await rm(join(directory, 'openai-ext.json'));
    await eventually(
      'the external delete to be seen',
      () => seen.some((c) => c.origin === 'external' && c.type === 'auth.delete' && c.id === 'openai-ext'),
      20_000,
    );
    await writeFile(join(directory, 'notes.txt'), 'ignored');
    stop();
    assert.ok(seen.every((c) => c.id === 'openai-ext'));
    await store.close();
  });
});

describe('FileCredentialStore encryption at rest', () => {
  const secretCredential = () =>
    sampleCredential('openai-enc', {
      token: 'sk-VERY-SECRET-TOKEN',
      type: 'oauth',
      refresh_token: 'rt-VERY-SECRET',
      oauth: { flow: 'custom', params: { region: 'eu' }, secrets: { client_secret: 'cs-VERY-SECRET' } },
    });

  test('secrets are encrypted with a versioned envelope; metadata stays readable', async () => {
    const directory = freshDir();
    const store = await FileCredentialStore.open({ directory, encryption: { key: KEY } });
    await store.put(secretCredential());
    const text = await readFile(join(directory, 'openai-enc.json'), 'utf8');
    assert.ok(!text.includes('VERY-SECRET'), text);
    const file = JSON.parse(text);
    assert.equal(file.format_version, 1);
    assert.deepEqual([file.id, file.provider, file.type, file.priority], ['openai-enc', 'openai', 'oauth', 1]);
    assert.deepEqual(file.oauth, { flow: 'custom', params: { region: 'eu' } });
    assert.deepEqual(Object.keys(file.encryption).sort(), ['algorithm', 'ciphertext', 'key_id', 'nonce', 'tag']);
    assert.equal(file.encryption.key_id, store.keyId);
    const back = (await store.get('openai-enc'))!;
    assert.equal(back.token, 'sk-VERY-SECRET-TOKEN');
    assert.equal(back.refresh_token, 'rt-VERY-SECRET');
    assert.deepEqual(back.oauth!.secrets, { client_secret: 'cs-VERY-SECRET' });
    await store.close();
  });

  test('a wrong key, a missing key or a tampered file gives status error with a clear message', async () => {
    const directory = freshDir();
    const store = await FileCredentialStore.open({ directory, encryption: { key: KEY } });
    await store.put(secretCredential());
    await store.put(sampleCredential('openai-other'));
    await store.close();
    const path = join(directory, 'openai-enc.json');
    const original = JSON.parse(await readFile(path, 'utf8'));

    const wrong = await FileCredentialStore.open({ directory, encryption: { key: generateEncryptionKey() } });
    const viaWrong = (await wrong.get('openai-enc'))!;
    assert.equal(viaWrong.status, 'error');
    assert.match(viaWrong.status_message!, /wrong key/);
    assert.equal(viaWrong.token, '');
    const plain = await FileCredentialStore.open({ directory });
    assert.match((await plain.get('openai-enc'))!.status_message!, /no key is configured/);

    const tampers: [string, (f: typeof original) => void][] = [
      ['ciphertext byte', (f) => (f.encryption.ciphertext = flipFirstByte(f.encryption.ciphertext))],
      ['auth tag', (f) => (f.encryption.tag = flipFirstByte(f.encryption.tag))],
      ['provider (rebinding the token to another upstream)', (f) => (f.provider = 'evil')],
      ['type', (f) => (f.type = 'api_key')],
      ['oauth flow', (f) => (f.oauth.flow = 'other')],
    ];
    const reader = await FileCredentialStore.open({ directory, encryption: { key: KEY } });
    for (const [what, change] of tampers) {
      const copy = structuredClone(original);
      change(copy);
      await writeFile(path, JSON.stringify(copy));
      const record = (await reader.get('openai-enc'))!;
      assert.equal(record.status, 'error', what);
      assert.match(record.status_message!, /authentication failed|only allowed/, what);
    }
    assert.equal((await reader.get('openai-other'))!.status, 'active', 'other files are unaffected');
    for (const s of [wrong, plain, reader]) await s.close();
  });

  test('rekey moves every file, plaintext ones included, to the new key without losing any', async () => {
    const directory = freshDir();
    const plainStore = await FileCredentialStore.open({ directory });
    for (let i = 0; i < 5; i++) await plainStore.put(sampleCredential(`openai-plain-${i}`));
    await plainStore.close();
    const store = await FileCredentialStore.open({ directory, encryption: { key: KEY } });
    for (let i = 0; i < 5; i++) await store.put(sampleCredential(`openai-enc-${i}`, { token: `tok-${i}` }));
    await writeFile(join(directory, 'openai-broken.json'), '{nope');
    const before = await store.list();
    const next = generateEncryptionKey();
    const report = await store.rekey(next);
    assert.deepEqual([report.rekeyed, report.already_current], [10, 0]);
    assert.deepEqual(report.skipped, [{ id: 'openai-broken', reason: 'not valid JSON (at byte 1)' }]);
    assert.equal(report.key_id, parseEncryptionKey(next).id);
    assert.equal(store.keyId, report.key_id);
    await store.close();

    const onlyNew = await FileCredentialStore.open({ directory, encryption: { key: next } });
    const after = await onlyNew.list();
    assert.deepEqual(after, before, 'every credential reads back the same under the new key alone');
    for (const c of after.filter((c) => c.status !== 'error')) {
      const text = await readFile(join(directory, `${c.id}.json`), 'utf8');
      assert.equal(JSON.parse(text).encryption.key_id, report.key_id);
      assert.ok(!text.includes(c.token));
    }
    // Back to plaintext.
    const toPlain = await onlyNew.rekey(null);
    assert.equal(toPlain.key_id, null);
    assert.equal(JSON.parse(await readFile(join(directory, 'openai-enc-0.json'), 'utf8')).token, 'tok-0');
    await onlyNew.close();
  });

  test('rekey writes nothing when a file cannot be decrypted', async () => {
    const directory = freshDir();
    const foreign = await FileCredentialStore.open({ directory, encryption: { key: generateEncryptionKey() } });
    await foreign.put(sampleCredential('openai-foreign'));
    await foreign.close();
    const store = await FileCredentialStore.open({ directory, encryption: { key: KEY } });
    await store.put(sampleCredential('openai-mine'));
    const snapshot = await readFile(join(directory, 'openai-mine.json'), 'utf8');
    await assert.rejects(store.rekey(generateEncryptionKey()), /rekey stopped before writing anything: 1 file\(s\).*openai-foreign\.json/);
    assert.equal(await readFile(join(directory, 'openai-mine.json'), 'utf8'), snapshot);
    assert.equal((await store.get('openai-mine'))!.status, 'active');
    await store.close();
  });

  test('after a rekey interrupted part-way, the old key as a previous key reads every file, and a rekey finishes the job', async () => {
    const directory = freshDir();
    const oldKey = generateEncryptionKey();
    const newKey = generateEncryptionKey();
    const oldStore = await FileCredentialStore.open({ directory, encryption: { key: oldKey } });
    for (let i = 0; i < 3; i++) await oldStore.put(sampleCredential(`openai-old-${i}`));
    await oldStore.close();
    // Simulate the crash: some files were rewritten under the new key, the rest were not.
    const newStore = await FileCredentialStore.open({ directory, encryption: { key: newKey, previousKeys: [oldKey] } });
    await newStore.put(sampleCredential('openai-old-0'));
    const mixed = await newStore.list();
    assert.ok(mixed.every((c) => c.status === 'active'));
    await newStore.close();
    // Run again as the command does, with the configured (old) key only: the new key reads the files it moved.
    const rerun = await FileCredentialStore.open({ directory, encryption: { key: oldKey } });
    const report = await rerun.rekey(newKey);
    assert.deepEqual([report.rekeyed, report.already_current], [2, 1]);
    await rerun.close();
    const onlyNew = await FileCredentialStore.open({ directory, encryption: { key: newKey } });
    assert.ok((await onlyNew.list()).every((c) => c.status === 'active'));
    await onlyNew.close();
  });
});

function flipFirstByte(base64: string): string {
  const bytes = Buffer.from(base64, 'base64');
  bytes[0]! ^= 0xff;
  return bytes.toString('base64');
}
