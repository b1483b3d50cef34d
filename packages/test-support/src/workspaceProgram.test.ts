import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildIsFresh, workspaceProgram } from './workspaceProgram.js';

const root = mkdtempSync(join(tmpdir(), 'workspace-program-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Writes `path` under the fake workspace with its modification time `secondsAgo` in the past. */
function file(path: string, secondsAgo: number): void {
  const full = join(root, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, '');
  const at = Date.now() / 1000 - secondsAgo;
  utimesSync(full, at, at);
}

test('the build is fresh only when every package has a dist/ newer than each file it is built from', () => {
  for (const name of ['a', 'b']) {
    file(`packages/${name}/package.json`, 100);
    file(`packages/${name}/tsup.config.ts`, 100);
    file(`packages/${name}/src/index.ts`, 50);
    file(`packages/${name}/dist/index.js`, 10);
  }
  file('packages/test-support/src/index.ts', 1); // no tsup.config.ts: not built, not checked
  assert.equal(buildIsFresh(root), true);

  file('packages/b/src/index.test.ts', 1); // tests are not built
  assert.equal(buildIsFresh(root), true);

  file('packages/b/src/deep/edited.ts', 1);
  assert.equal(buildIsFresh(root), false, 'a source edited after the build');
  file('packages/b/dist/index.js', 0);
  assert.equal(buildIsFresh(root), true, 'built again');

  file('packages/a/dist/stale-chunk.js', 60);
  assert.equal(buildIsFresh(root), false, 'one output older than a source');
  rmSync(join(root, 'packages/a/dist'), { recursive: true });
  assert.equal(buildIsFresh(root), false, 'no dist/');
});

test('SWITCHYARD_TEST_CHILDREN chooses the form, and a built child never inherits the source flags', (t) => {
  const bin = fileURLToPath(new URL('../../cli/src/bin.ts', import.meta.url));
  t.after(() => {
    delete process.env.SWITCHYARD_TEST_CHILDREN;
  });
  const inherited = process.env.NODE_OPTIONS;
  t.after(() => {
    process.env.NODE_OPTIONS = inherited;
  });
  process.env.NODE_OPTIONS = '--max-old-space-size=512 --conditions=@switchyard/source --import=file:///x/node_modules/tsx/dist/loader.mjs';

  process.env.SWITCHYARD_TEST_CHILDREN = 'source';
  const source = workspaceProgram(bin);
  assert.equal(source.form, 'source');
  assert.deepEqual(source.args.slice(-1), [bin]);
  assert.ok(source.args.includes('--conditions=@switchyard/source'));
  assert.equal(source.env.NODE_OPTIONS, '--max-old-space-size=512');

  process.env.SWITCHYARD_TEST_CHILDREN = 'built';
  const built = workspaceProgram(bin);
  if (built.form === 'built') {
    // Only where the build exists (CI builds before it tests).
    assert.match(built.args[0]!, /packages[/\\]cli[/\\]dist[/\\]bin\.js$/);
    assert.equal(built.args.length, 1);
  }
  assert.equal(built.env.NODE_OPTIONS, '--max-old-space-size=512');
});
