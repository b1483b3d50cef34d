import assert from 'node:assert/strict';
import { constants } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, readFile, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { makeFifo, settlesWithoutWaitingOn } from '@switchyard/test-support';
import { openConfinedFile, readConfinedFile, removeConfinedFile, writeConfinedFile } from './confinedFile.js';

let root: string;
let outside: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'confined-file-root-')));
  outside = await realpath(await mkdtemp(join(tmpdir(), 'confined-file-outside-')));
  await mkdir(join(root, 'dir'));
});
afterEach(() => Promise.all([root, outside].map((dir) => rm(dir, { recursive: true, force: true }))));

/** Between the check and the open: `root/dir` moves aside and a symlink out of the root takes its place. */
const swapDirForLinkOut = async () => {
  await rename(join(root, 'dir'), join(root, 'dir-moved'));
  await symlink(outside, join(root, 'dir'));
};

const pathEscape = { code: 'path_escape' };

test('a whole-file write creates its directories and replaces the file atomically, leaving no temporary file', async () => {
  assert.equal(await writeConfinedFile(root, 'dir/a/b.txt', 'one'), join(root, 'dir', 'a', 'b.txt'));
  await writeConfinedFile(root, 'dir/a/b.txt', 'two', { mode: 0o600 });
  assert.equal(await readFile(join(root, 'dir', 'a', 'b.txt'), 'utf8'), 'two');
  assert.equal((await lstat(join(root, 'dir', 'a', 'b.txt'))).mode & 0o777, 0o600);
  assert.deepEqual(await readdir(join(root, 'dir', 'a')), ['b.txt']);
  await assert.rejects(writeConfinedFile(root, '.', 'x', { field: 'relative_path' }), { code: 'invalid_argument' });
});

test('a directory swapped for a symlink out of the root after the check: the write is refused and nothing lands outside', async () => {
  await assert.rejects(writeConfinedFile(root, 'dir/file.txt', 'planted', { beforeOpen: swapDirForLinkOut }), pathEscape);
  assert.deepEqual(await readdir(outside), [], 'no file, not even a temporary one, outside the root');
});

test('a file swapped for a symlink out of the root: a whole-file write replaces the link and never follows it', async () => {
  const victim = join(outside, 'victim.txt');
  await writeFile(victim, 'untouched');
  const plantLink = () => symlink(victim, join(root, 'dir', 'file.txt'));
  await writeConfinedFile(root, 'dir/file.txt', 'written', { beforeOpen: plantLink });
  assert.equal(await readFile(victim, 'utf8'), 'untouched');
  assert.ok((await lstat(join(root, 'dir', 'file.txt'))).isFile(), 'the link was replaced by the file');
});

test('opening for append refuses a symlink swapped in for the file or for its directory', async () => {
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;
  const victim = join(outside, 'victim.log');
  await writeFile(victim, 'untouched\n');
  const plantLink = () => symlink(victim, join(root, 'dir', 'app.log'));
  await assert.rejects(openConfinedFile(root, 'dir/app.log', flags, { beforeOpen: plantLink }), {
    code: 'path_escape',
    message: /"dir\/app.log" is a symlink/,
  });
  await rm(join(root, 'dir', 'app.log'));
  await assert.rejects(openConfinedFile(root, 'dir/app.log', flags, { beforeOpen: swapDirForLinkOut }), pathEscape);
  assert.deepEqual(await readdir(outside), ['victim.log']);
  assert.equal(await readFile(victim, 'utf8'), 'untouched\n');

  const handle = await openConfinedFile(root, 'dir-moved/app.log', flags);
  await handle.appendFile('line\n');
  await handle.close();
  assert.equal(await readFile(join(root, 'dir-moved', 'app.log'), 'utf8'), 'line\n', 'an ordinary open still works');
});

test('a read follows links that stay inside the root but refuses a file swapped for a link out of it', async () => {
  await writeFile(join(root, 'dir', 'spec.md'), '# spec');
  await symlink('dir/spec.md', join(root, 'alias.md'));
  assert.equal((await readConfinedFile(root, 'alias.md')).toString(), '# spec');

  await writeFile(join(outside, 'secret'), 'outside the root');
  const swapFile = async () => {
    await rm(join(root, 'dir', 'spec.md'));
    await symlink(join(outside, 'secret'), join(root, 'dir', 'spec.md'));
  };
  await assert.rejects(readConfinedFile(root, 'dir/spec.md', { field: 'from_file', beforeOpen: swapFile }), {
    code: 'path_escape',
    details: { field: 'from_file' },
  });
});

test('a read refuses a FIFO at once, without waiting for a writer, and a directory: not_found naming the field', async () => {
  const pipe = join(root, 'dir', 'pipe');
  await makeFifo(pipe);
  await assert.rejects(settlesWithoutWaitingOn(pipe, readConfinedFile(root, 'dir/pipe', { field: 'from_file' })), {
    code: 'not_found',
    message: 'from_file "dir/pipe" is a FIFO (named pipe), not a regular file',
    details: { field: 'from_file' },
  });
  // A link inside the root to the FIFO is refused the same way: what was opened is checked, not the name.
  await symlink('dir/pipe', join(root, 'pipe-link'));
  await assert.rejects(settlesWithoutWaitingOn(pipe, readConfinedFile(root, 'pipe-link')), { code: 'not_found' });
  await assert.rejects(readConfinedFile(root, 'dir', { field: 'key_file' }), {
    code: 'not_found',
    message: 'key_file "dir" is a directory, not a regular file',
  });
  await writeFile(join(root, 'dir', 'plain.txt'), 'plain');
  assert.equal((await readConfinedFile(root, 'dir/plain.txt')).toString(), 'plain', 'a regular file still reads');
});

test('opening for writing refuses a FIFO at once, with or without a reader, and a directory: not_found naming the field', async () => {
  const pipe = join(root, 'dir', 'pipe');
  await makeFifo(pipe);
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;
  const refused = {
    code: 'not_found',
    message: 'audit_log "dir/pipe" is a FIFO (named pipe), not a regular file',
    details: { field: 'audit_log' },
  };
  // No reader: a plain open for writing would wait for one, possibly forever.
  await assert.rejects(settlesWithoutWaitingOn(pipe, openConfinedFile(root, 'dir/pipe', flags, { field: 'audit_log' })), refused);
  // A reader at the other end lets the open through; what was opened is refused all the same.
  const reader = await open(pipe, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    await assert.rejects(openConfinedFile(root, 'dir/pipe', flags, { field: 'audit_log' }), refused);
  } finally {
    await reader.close();
  }
  await assert.rejects(openConfinedFile(root, 'dir', flags), {
    code: 'not_found',
    message: 'path "dir" is a directory, not a regular file',
  });
  await assert.rejects(openConfinedFile(root, 'dir', constants.O_RDONLY), {
    code: 'not_found',
    message: 'path "dir" is a directory, not a regular file',
  });
});

test('a remove through a directory swapped for a link out of the root is refused and the file outside stays', async () => {
  await writeFile(join(root, 'dir', 'old.txt'), 'inside');
  await writeFile(join(outside, 'old.txt'), 'outside');
  await assert.rejects(removeConfinedFile(root, 'dir/old.txt', { beforeOpen: swapDirForLinkOut }), pathEscape);
  assert.equal(await readFile(join(outside, 'old.txt'), 'utf8'), 'outside');
  await removeConfinedFile(root, 'dir-moved/old.txt');
  assert.deepEqual(await readdir(join(root, 'dir-moved')), []);
});
