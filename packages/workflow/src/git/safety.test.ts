import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { confinedPath } from './safety.js';

let root: string;
let outside: string;
before(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'confined-root-')));
  outside = await realpath(await mkdtemp(join(tmpdir(), 'confined-outside-')));
  await mkdir(join(root, 'dir'));
});
after(() => Promise.all([root, outside].map((dir) => rm(dir, { recursive: true, force: true }))));

const pathEscape = { code: 'path_escape' };

test('paths inside the root that do not exist yet pass, at any depth', async () => {
  assert.equal(await confinedPath(root, 'new.txt'), join(root, 'new.txt'));
  assert.equal(await confinedPath(root, 'dir/new.txt'), join(root, 'dir', 'new.txt'));
  assert.equal(await confinedPath(root, 'missing/deeper/new.txt'), join(root, 'missing', 'deeper', 'new.txt'));
  assert.equal(await confinedPath(join(root, 'not-yet'), 'a/b.txt'), join(root, 'not-yet', 'a', 'b.txt'), 'a missing root too');
});

test('a dangling symlink pointing outside the root is refused: writing through it would create its target there', async () => {
  await symlink(join(outside, 'planted.txt'), join(root, 'dangling-abs'));
  await assert.rejects(confinedPath(root, 'dangling-abs'), pathEscape);
  await symlink('../../../../../../../../../../tmp/confined-planted', join(root, 'dir', 'dangling-rel'));
  await assert.rejects(confinedPath(root, 'dir/dangling-rel'), pathEscape, 'a relative target resolves from the link’s directory');
});

test('a dangling directory symlink out of the root is refused for paths below it', async () => {
  await symlink(join(outside, 'not-yet-a-dir'), join(root, 'dangling-dir'));
  await assert.rejects(confinedPath(root, 'dangling-dir/file.txt'), pathEscape);
});

test('chains of links are followed to their end: inside passes, outside or endless is refused', async () => {
  await symlink(join(outside, 'end.txt'), join(root, 'chain-2'));
  await symlink('chain-2', join(root, 'chain-1'));
  await assert.rejects(confinedPath(root, 'chain-1'), pathEscape);

  await symlink('dir/not-yet.txt', join(root, 'inner-2'));
  await symlink('inner-2', join(root, 'inner-1'));
  assert.equal(await confinedPath(root, 'inner-1'), join(root, 'inner-1'), 'a dangling link that stays inside is fine');

  await symlink('loop-b', join(root, 'loop-a'));
  await symlink('loop-a', join(root, 'loop-b'));
  await assert.rejects(confinedPath(root, 'loop-a'), { code: 'path_escape', message: /more than 40 symlinks/ });
});

test('a parent directory that is a link out of the root is refused even when the file below does not exist', async () => {
  await symlink(outside, join(root, 'dir', 'out'));
  await assert.rejects(confinedPath(root, 'dir/out/new/file.txt'), pathEscape);
});

test('a component that cannot be looked at for another reason than not existing is refused, naming the reason', async () => {
  await writeFile(join(root, 'plain.txt'), 'a file, not a directory');
  await assert.rejects(confinedPath(root, 'plain.txt/below.txt', 'relative_path'), {
    code: 'path_escape',
    message: /relative_path: "plain.txt\/below.txt" cannot be checked \(ENOTDIR: a file on the way is used as a directory\)/,
    details: { field: 'relative_path', reason: 'ENOTDIR' },
  });
  await assert.rejects(confinedPath(root, 'plain.txt/deeper/below.txt'), {
    code: 'path_escape',
    details: { field: 'path', reason: 'ENOTDIR' },
  });
  await assert.rejects(confinedPath(root, `${'n'.repeat(300)}/file.txt`), {
    code: 'path_escape',
    details: { field: 'path', reason: 'ENAMETOOLONG' },
  });
  assert.equal(await confinedPath(root, 'plain.txt'), join(root, 'plain.txt'), 'the file itself is fine');
});
