import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { syncDirectory, writeFileAtomic } from './fs.js';

const root = await mkdtemp(join(tmpdir(), 'runtime-fs-'));
after(() => rm(root, { recursive: true, force: true }));

test('writes a new file and replaces an old one whole, mode 0600 by default, leaving no temp file', async () => {
  const dir = await mkdtemp(join(root, 'w-'));
  await writeFileAtomic(dir, 'a.json', '{"v":1}\n');
  assert.equal(await readFile(join(dir, 'a.json'), 'utf8'), '{"v":1}\n');
  assert.equal((await stat(join(dir, 'a.json'))).mode & 0o777, 0o600);
  await writeFileAtomic(dir, 'a.json', new TextEncoder().encode('{"v":2}\n'));
  assert.equal(await readFile(join(dir, 'a.json'), 'utf8'), '{"v":2}\n');
  assert.deepEqual(await readdir(dir), ['a.json']);
});

test('sets the mode exactly whatever the umask, or lets the umask narrow it with exactMode false', async () => {
  const dir = await mkdtemp(join(root, 'm-'));
  const previous = process.umask(0o077);
  try {
    await writeFileAtomic(dir, 'exact', 'x', { mode: 0o644 });
    await writeFileAtomic(dir, 'umasked', 'x', { mode: 0o644, exactMode: false });
  } finally {
    process.umask(previous);
  }
  assert.equal((await stat(join(dir, 'exact'))).mode & 0o777, 0o644);
  assert.equal((await stat(join(dir, 'umasked'))).mode & 0o777, 0o600);
});

test('replaces a symlink at the target instead of writing through it', async () => {
  const dir = await mkdtemp(join(root, 'l-'));
  const outside = join(root, 'outside.txt');
  await writeFile(outside, 'untouched');
  await symlink(outside, join(dir, 'target'));
  await writeFileAtomic(dir, 'target', 'new');
  assert.equal(await readFile(outside, 'utf8'), 'untouched');
  assert.equal(await readFile(join(dir, 'target'), 'utf8'), 'new');
  await assert.rejects(readlink(join(dir, 'target')), { code: 'EINVAL' });
});

test('a failed write throws the file system error and removes its temp file', async () => {
  const dir = await mkdtemp(join(root, 'f-'));
  await mkdir(join(dir, 'taken'));
  await writeFile(join(dir, 'taken', 'inside'), '');
  await assert.rejects(writeFileAtomic(dir, 'taken', 'x'), (error: NodeJS.ErrnoException) => typeof error.code === 'string');
  assert.deepEqual(await readdir(dir), ['taken']);
  await assert.rejects(writeFileAtomic(join(dir, 'missing'), 'a', 'x'), { code: 'ENOENT' });
});

test('a long name still gets a temp name the file system takes', async () => {
  const dir = await mkdtemp(join(root, 'n-'));
  const name = `${'n'.repeat(240)}.json`;
  await writeFileAtomic(dir, name, 'x');
  assert.deepEqual(await readdir(dir), [name]);
});

test('syncDirectory ignores what cannot be synced', async () => {
  await syncDirectory(join(root, 'no-such-directory'));
  await syncDirectory(root);
  assert.ok((await stat(root)).isDirectory());
});
