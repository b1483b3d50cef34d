import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { type DirectoryEntryChange, watchDirectory } from './watchDirectory.js';
import { watchFile } from './watchFile.js';

const root = await mkdtemp(join(tmpdir(), 'watch-'));
after(() => rm(root, { recursive: true, force: true }));

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('watchDirectory', () => {
  test('reports accepted files as present or gone once their events settle, and nothing after close()', async () => {
    const directory = await mkdtemp(join(root, 'dir-'));
    const seen: [string, DirectoryEntryChange][] = [];
    const watch = watchDirectory(directory, (name, change) => seen.push([name, change]), { accept: (name) => name.endsWith('.json') });
    try {
      // Written synchronously, the burst's events are all read in one turn of the event loop: one burst however
      // slow the machine. Awaited writes would leave it room to let the settle time pass between their events
      // (as in watchFile's test below), and a burst split in two is reported twice.
      writeFileSync(join(directory, 'a.json'), '{}');
      writeFileSync(join(directory, 'a.json'), '{"twice":true}');
      writeFileSync(join(directory, 'notes.txt'), 'ignored');
      await eventually('a.json present', () => seen.some(([name, change]) => name === 'a.json' && change === 'present'));
      // A burst is one report, and an ignored name none.
      await pause(150);
      assert.deepEqual(seen, [['a.json', 'present']]);
      // Saved by renaming a temp file over it: still the same name, present.
      await writeFile(join(directory, '.a.json.tmp'), '{"renamed":true}');
      await rename(join(directory, '.a.json.tmp'), join(directory, 'a.json'));
      await eventually('the rename', () => seen.length === 2);
      assert.deepEqual(seen[1], ['a.json', 'present']);
      await unlink(join(directory, 'a.json'));
      await eventually('a.json gone', () => seen.length === 3);
      assert.deepEqual(seen[2], ['a.json', 'gone']);
    } finally {
      watch.close();
    }
    // Written right before close(): never reported, however long we wait.
    const late = watchDirectory(directory, (name, change) => seen.push([name, change]), { accept: () => true });
    await writeFile(join(directory, 'b.json'), '{}');
    late.close();
    await pause(150);
    assert.equal(seen.length, 3);
  });
});

describe('watchFile', () => {
  test('sees a write and an atomic save of the file, not its neighbours, and stops at close()', async () => {
    const directory = await mkdtemp(join(root, 'file-'));
    const path = join(directory, 'config.yaml');
    await writeFile(path, 'a: 1\n');
    let changes = 0;
    const watch = watchFile(path, () => changes++, { settleMs: 20, recheckMs: 60 });
    await watch.ready;
    try {
      await writeFile(join(directory, 'other.yaml'), 'x');
      await pause(120);
      assert.equal(changes, 0, 'a neighbour is not the file');
      await writeFile(path, 'a: 2\n');
      await eventually('the write', () => changes >= 1);
      await pause(120);
      const afterWrite = changes;
      // writeFile truncates, then writes: two bursts of events when a loaded machine lets the settle window
      // pass between them, each reported once and re-checked once.
      assert.ok(afterWrite <= 4, `a report and its re-check per burst, not one per event (${afterWrite})`);
      await writeFile(join(directory, 'config.yaml.new'), 'a: 3\n');
      await rename(join(directory, 'config.yaml.new'), path);
      await eventually('the atomic save', () => changes > afterWrite);
    } finally {
      await watch.close();
    }
    const closedAt = changes;
    await writeFile(path, 'a: 4\n');
    await pause(150);
    assert.equal(changes, closedAt, 'nothing after close()');
  });
});
