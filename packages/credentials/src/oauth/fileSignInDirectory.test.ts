import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runSignInDirectoryContract, sampleSignInRecord } from '../contract.js';
import { FileSignInDirectory } from './fileSignInDirectory.js';

const root = await mkdtemp(join(tmpdir(), 'sign-in-files-'));
after(() => rm(root, { recursive: true, force: true }));
let counter = 0;
const freshDir = () => join(root, `d${++counter}`, '.sign-ins');

runSignInDirectoryContract('FileSignInDirectory', async () => ({ directory: await FileSignInDirectory.open(freshDir()) }));

test('a file holds the public status only, mode 0600 in a 0700 directory, and outlives the process that wrote it', async () => {
  const path = freshDir();
  const directory = await FileSignInDirectory.open(path);
  const record = sampleSignInRecord('local');
  // What a careless caller might hand over with the status: none of it may reach the disk.
  const leaky = { ...record, device_code: 'device-code-never-stored', token: 'access-token-never-stored' };
  await directory.put(leaky);
  await directory.close();

  assert.equal((await stat(path)).mode & 0o777, 0o700);
  const file = join(path, `${record.id}.json`);
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  const text = await readFile(file, 'utf8');
  for (const secret of ['device-code-never-stored', 'access-token-never-stored']) assert.equal(text.includes(secret), false, secret);
  assert.deepEqual(Object.keys(JSON.parse(text)).sort(), [
    'cancel_requested',
    'credential_id',
    'error',
    'finished_at',
    'flow',
    'forget_at',
    'id',
    'node_id',
    'prompt',
    'started_at',
    'state',
  ]);

  const reopened = await FileSignInDirectory.open(path);
  const now = Date.parse(record.started_at);
  assert.deepEqual(await reopened.get(record.id, now), { ...record, cancel_requested: false }, 'a new process reads it back');
  assert.equal(await reopened.interrupt('local', record.started_at, record.forget_at), 1);
  assert.equal((await reopened.get(record.id, now))?.error?.code, 'interrupted');
  await reopened.close();
  await assert.rejects(reopened.get(record.id, now), { code: 'closed' });
});

test('a cancel requested through another handle on the directory reaches the owner at its next check', async () => {
  const path = freshDir();
  const owner = await FileSignInDirectory.open(path);
  const other = await FileSignInDirectory.open(path);
  const record = sampleSignInRecord('local');
  await owner.put(record);
  const now = Date.parse(record.started_at);
  assert.equal((await other.requestCancel(record.id, now))?.cancel_requested, true);
  assert.equal((await owner.get(record.id, now))?.cancel_requested, true);
  await owner.put({ ...record, state: 'cancelled', finished_at: record.started_at });
  assert.equal((await other.get(record.id, now))?.cancel_requested, true, "the owner's write keeps the request");
  await owner.close();
  await other.close();
});

test('ids that are not base64url name no file; files that hold no record are answered as absent and pruned', async () => {
  const path = freshDir();
  const directory = await FileSignInDirectory.open(path);
  await writeFile(join(path, '..', 'outside.json'), JSON.stringify(sampleSignInRecord('local', { id: 'outside' })));
  for (const id of ['../outside', '.hidden', 'a/b', '', 'x'.repeat(129)]) {
    assert.equal(await directory.get(id, 0), undefined, id);
    assert.equal(await directory.requestCancel(id, 0), undefined, id);
    await assert.rejects(directory.put(sampleSignInRecord('local', { id })), { code: 'invalid_argument' }, id);
  }
  const good = sampleSignInRecord('local');
  await directory.put(good);
  await writeFile(join(path, 'broken.json'), '{"id":');
  await writeFile(join(path, 'renamed.json'), JSON.stringify(sampleSignInRecord('local')));
  assert.equal(await directory.get('broken', 0), undefined);
  assert.equal(await directory.get('renamed', 0), undefined, 'a record must be in the file its id names');
  await directory.prune(Date.parse(good.started_at));
  assert.deepEqual(await readdir(path), [`${good.id}.json`]);
  await directory.close();
});
