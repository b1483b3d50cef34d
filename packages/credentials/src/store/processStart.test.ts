import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { processStart, startTicksOf } from './processStart.js';

const root = await mkdtemp(join(tmpdir(), 'credentials-proc-'));
after(() => rm(root, { recursive: true, force: true }));
const hasProc = (await processStart(process.pid)) !== undefined;

/** A `/proc/<pid>/stat` line up to field 22, with `comm` as the command name. */
const statLine = (comm: string, startTicks: string) =>
  `4242 (${comm}) S 1 4242 4242 0 -1 4194560 ${'0 '.repeat(8)}20 0 1 0 ${startTicks} 123456 789 18446744073709551615\n`;

describe('when a process started', () => {
  test('field 22 is counted from the last parenthesis: a command name may hold spaces and parentheses', () => {
    assert.equal(startTicksOf(statLine('node', '2713395')), 2713395);
    assert.equal(startTicksOf(statLine('a b) S 1 (c', '77')), 77);
    assert.equal(startTicksOf('4242 (node) S 1 2'), undefined, 'too few fields');
    assert.equal(startTicksOf(statLine('node', '-5')), undefined);
    assert.equal(startTicksOf('no parenthesis at all'), undefined);
  });

  test('read from a /proc: the boot id and the start ticks; nothing without one', async () => {
    const proc = join(root, 'proc');
    await mkdir(join(proc, 'sys/kernel/random'), { recursive: true });
    await mkdir(join(proc, '4242'));
    await writeFile(join(proc, 'sys/kernel/random/boot_id'), '6f0e2b1c-0a4d-4c59-9a43-2f1d8f0c7e11\n');
    await writeFile(join(proc, '4242/stat'), statLine('node', '2713395'));
    assert.deepEqual(await processStart(4242, proc), { boot_id: '6f0e2b1c-0a4d-4c59-9a43-2f1d8f0c7e11', start_ticks: 2713395 });
    assert.equal(await processStart(4243, proc), undefined, 'a process that is not there');
    assert.equal(await processStart(4242, join(root, 'no-proc')), undefined, 'no /proc (macOS)');
  });

  test('on this machine, a process started later has a later start time in the same boot', {
    skip: hasProc ? false : 'no /proc',
  }, async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    after(() => child.kill());
    await new Promise((resolve) => child.once('spawn', resolve));
    const mine = (await processStart(process.pid))!;
    const its = (await processStart(child.pid!))!;
    assert.equal(its.boot_id, mine.boot_id);
    assert.ok(its.start_ticks >= mine.start_ticks, `${its.start_ticks} ≥ ${mine.start_ticks}`);
  });
});
