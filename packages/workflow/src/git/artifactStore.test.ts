import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { WorkflowError } from '../errors.js';
import { ArtifactStore } from './artifactStore.js';

const base = await realpath(await mkdtemp(join(tmpdir(), 'workflow-artifacts-')));
after(() => rm(base, { recursive: true, force: true }));
const code = (expected: string) => (e: unknown) => e instanceof WorkflowError && e.code === expected;

test('write, read, hash, list, verify and remove under <feature_slug>/<relative_path>', async () => {
  const store = new ArtifactStore(join(base, 'a'));
  const written = await store.write('001-login', 'spec/spec.md', '# Login\n');
  const hex = createHash('sha256').update('# Login\n').digest('hex');
  assert.deepEqual(written, { path: '001-login/spec/spec.md', hash: `sha256:${hex}`, size_bytes: 8 });
  assert.equal(await readFile(join(base, 'a', '001-login', 'spec', 'spec.md'), 'utf8'), '# Login\n');
  assert.deepEqual(await store.hash('001-login', 'spec/spec.md'), written);
  const read = await store.read('001-login', 'spec/spec.md');
  assert.equal(read.content.toString(), '# Login\n');
  await store.write('001-login', 'plan.md', Buffer.from([0, 1, 2]));
  assert.deepEqual(
    (await store.list('001-login')).map((a) => [a.path, a.size_bytes]),
    [
      ['001-login/plan.md', 3],
      ['001-login/spec/spec.md', 8],
    ],
  );
  assert.deepEqual(await store.list('002-empty'), []);
  assert.equal((await store.verify('001-login', 'spec/spec.md', written.hash)).valid, true);
  assert.equal((await store.verify('001-login', 'spec/spec.md', `sha256:${'0'.repeat(64)}`)).valid, false);
  await store.write('001-login', 'spec/spec.md', '# Login v2\n');
  assert.notEqual((await store.hash('001-login', 'spec/spec.md')).hash, written.hash);
  assert.deepEqual(
    (await readdir(join(base, 'a', '001-login', 'spec'))).filter((n) => n.endsWith('.tmp')),
    [],
    'no temp files are left behind',
  );
  assert.deepEqual(await store.remove('001-login', 'plan.md'), { path: '001-login/plan.md', removed: true });
  await assert.rejects(store.read('001-login', 'plan.md'), code('not_found'));
  await assert.rejects(store.remove('001-login', 'plan.md'), code('not_found'));
});

test('escapes are refused: .., absolute paths, bad slugs, symlinked files and directories', async () => {
  const root = join(base, 'b');
  const store = new ArtifactStore(root);
  await assert.rejects(store.write('001-login', '../002-other/spec.md', 'x'), code('path_escape'));
  await assert.rejects(store.write('001-login', '../../../../etc/cron.d/x', 'x'), code('path_escape'));
  await assert.rejects(store.write('001-login', '/etc/passwd', 'x'), code('path_escape'));
  await assert.rejects(store.write('001-login', 'a/../../b', 'x'), code('path_escape'));
  await assert.rejects(store.write('001-login', 'nul\0byte', 'x'), code('path_escape'));
  await assert.rejects(store.write('../etc', 'x', 'x'), code('invalid_argument'));
  await assert.rejects(store.write('UPPER', 'x', 'x'), code('invalid_argument'));
  await assert.rejects(store.read('001-login', '.'), code('invalid_argument'));
  const outside = join(base, 'outside');
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), 'secret');
  await mkdir(join(root, '001-login'), { recursive: true });
  await symlink(join(outside, 'secret.txt'), join(root, '001-login', 'link.txt'));
  await assert.rejects(store.read('001-login', 'link.txt'), code('path_escape'));
  await assert.rejects(store.write('001-login', 'link.txt', 'overwrite'), code('path_escape'));
  assert.equal(await readFile(join(outside, 'secret.txt'), 'utf8'), 'secret');
  await symlink(outside, join(root, '001-login', 'dir-link'));
  await assert.rejects(store.write('001-login', 'dir-link/new.txt', 'x'), code('path_escape'));
  assert.ok(!existsSync(join(outside, 'new.txt')));
  await symlink(outside, join(root, '003-linked'));
  await assert.rejects(store.read('003-linked', 'secret.txt'), code('path_escape'));
  await assert.rejects(store.list('003-linked'), code('path_escape'));
  assert.deepEqual(
    (await store.list('001-login')).map((a) => a.path),
    [],
    'symlinks are never listed',
  );
});

test('a feature directory swapped for a symlink out of the root after the check: write, read and remove refuse, nothing outside changes', async () => {
  const root = join(base, 'c');
  const outside = join(base, 'outside-c');
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'spec.md'), 'outside');
  let swap = false;
  // Runs between the path check and the open: the moment a path-based write would follow the new link.
  const beforeOpen = async () => {
    if (!swap) return;
    swap = false;
    await rename(join(root, '001-login'), join(root, '001-login-moved'));
    await symlink(outside, join(root, '001-login'));
  };
  const store = new ArtifactStore(root, { beforeOpen });
  const restore = async () => {
    await rm(join(root, '001-login'));
    await rename(join(root, '001-login-moved'), join(root, '001-login'));
  };
  await store.write('001-login', 'spec.md', 'inside');

  swap = true;
  await assert.rejects(store.write('001-login', 'spec.md', 'planted'), code('path_escape'));
  assert.deepEqual(await readdir(outside), ['spec.md'], 'no file, not even a temporary one, lands outside');
  assert.equal(await readFile(join(outside, 'spec.md'), 'utf8'), 'outside');
  await restore();

  swap = true;
  await assert.rejects(store.read('001-login', 'spec.md'), code('path_escape'), 'the file outside is not read');
  await restore();

  swap = true;
  await assert.rejects(store.remove('001-login', 'spec.md'), code('path_escape'));
  assert.equal(await readFile(join(outside, 'spec.md'), 'utf8'), 'outside', 'the file outside is not removed');
  await restore();
  assert.equal((await store.read('001-login', 'spec.md')).content.toString(), 'inside');
});
