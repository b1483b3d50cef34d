import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { SOURCE_FLAGS } from '../../test/support.js';
import type { AuditChainError } from '../core/errors.js';
import { acquireFileLock, currentProcessIdentity, isProcessGone } from './fileLock.js';

const dir = await mkdtemp(join(tmpdir(), 'audit-lock-'));
after(() => rm(dir, { recursive: true, force: true }));
let counter = 0;
const lockPath = () => join(dir, `l-${counter++}.lock`);
const me = await currentProcessIdentity();
const hasProc = me.boot_id !== undefined && me.start_ticks !== undefined;

describe('acquireFileLock', () => {
  test('records PID, host, boot id, start time and PID namespace', async () => {
    const path = lockPath();
    const release = await acquireFileLock(path);
    const held = JSON.parse(await readFile(path, 'utf8'));
    await release();
    assert.equal(held.pid, process.pid);
    assert.equal(held.host, hostname());
    assert.equal(typeof held.acquired_at, 'number');
    if (hasProc) {
      assert.equal(held.boot_id, me.boot_id);
      assert.equal(held.start_ticks, me.start_ticks);
    }
    await assert.rejects(stat(path), { code: 'ENOENT' });
  });

  test('breaks a stale lock left by "PID 1" of another boot', { skip: !hasProc && 'no /proc' }, async () => {
    const path = lockPath();
    // PID 1 is alive (it is init, or this container's first process): a PID-only check keeps waiting on it.
    await writeFile(path, `${JSON.stringify({ pid: 1, host: hostname(), boot_id: 'an-earlier-boot', start_ticks: 1, token: 't' })}\n`);
    const release = await acquireFileLock(path, { timeoutMs: 500 });
    assert.equal(JSON.parse(await readFile(path, 'utf8')).pid, process.pid);
    await release();
  });

  test("breaks a lock naming this PID with another start time (a restarted PID 1 finding its predecessor's lock)", {
    skip: !hasProc && 'no /proc',
  }, async () => {
    const path = lockPath();
    await writeFile(path, `${JSON.stringify({ ...me, start_ticks: (me.start_ticks ?? 0) + 12345, token: 't' })}\n`);
    const release = await acquireFileLock(path, { timeoutMs: 500 });
    await release();
    await assert.rejects(stat(path), { code: 'ENOENT' });
  });

  test('does not break a live lock of this process', async () => {
    const path = lockPath();
    const release = await acquireFileLock(path);
    await assert.rejects(acquireFileLock(path, { timeoutMs: 100 }), (error: unknown) => (error as AuditChainError).code === 'LOCK_TIMEOUT');
    await release();
  });

  test('does not judge a lock from another host or PID namespace by its PID, but ends it at its maximum age', async () => {
    const foreignHost = lockPath();
    await writeFile(foreignHost, `${JSON.stringify({ pid: 999_999_99, host: `not-${hostname()}`, token: 't' })}\n`);
    await assert.rejects(acquireFileLock(foreignHost, { timeoutMs: 100 }), { code: 'LOCK_TIMEOUT' });
    const otherNamespace = lockPath();
    await writeFile(otherNamespace, `${JSON.stringify({ ...me, pid: 999_999_99, pid_ns: 'pid:[1]', token: 't' })}\n`);
    if (me.pid_ns !== undefined) await assert.rejects(acquireFileLock(otherNamespace, { timeoutMs: 100 }), { code: 'LOCK_TIMEOUT' });
    const old = new Date(Date.now() - 3_600_000);
    await utimes(foreignHost, old, old);
    const release = await acquireFileLock(foreignHost, { timeoutMs: 500, maxAgeMs: 60_000 });
    await release();
  });

  test('breaks a lock whose PID is gone (same host and namespace)', async () => {
    const path = lockPath();
    await writeFile(path, `${JSON.stringify({ ...me, pid: 999_999_99, token: 't' })}\n`);
    const release = await acquireFileLock(path, { timeoutMs: 500 });
    await release();
    assert.equal(await isProcessGone({ ...me, pid: 999_999_99 }), true);
    assert.equal(await isProcessGone(me), false);
  });
});

describe('acquireFileLock, breakers of one stale lock', () => {
  const deadLock = `${JSON.stringify({ ...me, pid: 999_999_99, token: 'dead' })}\n`;

  test('a stale lock is not broken while another breaker holds its claim, and is once the claim is gone', async () => {
    const path = lockPath();
    await writeFile(path, deadLock);
    // A live breaker (this process) is at work: it alone may move the lock aside.
    await writeFile(`${path}.break`, `${JSON.stringify({ ...me, token: 'breaker' })}\n`);
    await assert.rejects(acquireFileLock(path, { timeoutMs: 150 }), (error: AuditChainError) => error.code === 'LOCK_TIMEOUT');
    assert.equal(await readFile(path, 'utf8'), deadLock, 'the lock was left to the breaker holding the claim');
    await rm(`${path}.break`);
    const release = await acquireFileLock(path, { timeoutMs: 500 });
    assert.equal(JSON.parse(await readFile(path, 'utf8')).pid, process.pid);
    await release();
    await assert.rejects(stat(`${path}.break`), { code: 'ENOENT' }, 'the breaker gave its claim back');
  });

  test('a claim left by a crashed breaker, or standing too long, is cleared and the stale lock broken', async () => {
    const crashed = lockPath();
    await writeFile(crashed, deadLock);
    await writeFile(`${crashed}.break`, `${JSON.stringify({ ...me, pid: 999_999_98, token: 'crashed' })}\n`);
    await (await acquireFileLock(crashed, { timeoutMs: 1_000 }))();
    await assert.rejects(stat(`${crashed}.break`), { code: 'ENOENT' });

    const unjudgeable = lockPath();
    await writeFile(unjudgeable, deadLock);
    // Another host's breaker cannot be judged by PID: only the claim's age clears it.
    await writeFile(`${unjudgeable}.break`, `${JSON.stringify({ pid: 4242, host: `not-${hostname()}`, token: 'far' })}\n`);
    await assert.rejects(acquireFileLock(unjudgeable, { timeoutMs: 100 }), { code: 'LOCK_TIMEOUT' });
    const old = new Date(Date.now() - 60_000);
    await utimes(`${unjudgeable}.break`, old, old);
    await (await acquireFileLock(unjudgeable, { timeoutMs: 1_000 }))();
  });

  test('many processes breaking one stale lock at once: one writer at a time holds it', {
    skip: process.platform !== 'linux' && 'needs /proc',
  }, async () => {
    const path = lockPath();
    await writeFile(path, deadLock);
    const log = join(dir, `holders-${counter}.log`);
    // Each process takes the lock, notes its entry, waits a moment and notes its exit; overlapping holders show
    // as an entry between another's entry and exit.
    const script = `
      const { acquireFileLock } = await import(${JSON.stringify(new URL('./fileLock.ts', import.meta.url).href)});
      const { appendFileSync } = await import('node:fs');
      const release = await acquireFileLock(${JSON.stringify(path)}, { timeoutMs: 20000 });
      appendFileSync(${JSON.stringify(log)}, 'in ' + process.pid + '\\n');
      await new Promise((r) => setTimeout(r, 5));
      appendFileSync(${JSON.stringify(log)}, 'out ' + process.pid + '\\n');
      await release();
    `;
    const runs = Array.from({ length: 8 }, () => {
      const child = spawn(process.execPath, [...SOURCE_FLAGS, '--input-type=module', '-e', script], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      return new Promise<number | null>((resolve) => child.on('exit', resolve));
    });
    assert.deepEqual(await Promise.all(runs), Array(8).fill(0));
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    assert.equal(lines.length, 16);
    for (let i = 0; i < lines.length; i += 2) {
      const [entry, exit] = [lines[i]!.split(' '), lines[i + 1]!.split(' ')];
      assert.deepEqual([entry[0], exit[0], exit[1]], ['in', 'out', entry[1]], `holders overlapped: ${lines.join(', ')}`);
    }
  });
});

describe('acquireFileLock, a lock that changes hands while a waiter judges it', () => {
  test('a lock released and taken by a live owner while a waiter judged the old one is left alone', {
    skip: process.platform !== 'linux' && 'needs mkfifo',
  }, async () => {
    // A /proc whose boot id a test can hold back: the waiter's judgement of the old lock waits on a FIFO.
    const procRoot = join(dir, 'proc');
    const bootIdPath = join(procRoot, 'sys/kernel/random/boot_id');
    await mkdir(join(procRoot, 'sys/kernel/random'), { recursive: true });
    await writeFile(bootIdPath, 'boot-now\n');
    // The waiter reads its own identity once per /proc root: read it now, while the boot id is a plain file.
    await (await acquireFileLock(lockPath(), { procRoot }))();
    await rm(bootIdPath);
    execFileSync('mkfifo', [bootIdPath]);

    const lockDir = join(dir, 'changing-hands');
    await mkdir(lockDir);
    const path = join(lockDir, 'audit.lock');
    const old = `${JSON.stringify({ ...me, boot_id: 'boot-before', token: 'old' })}\n`;
    const live = `${JSON.stringify({ ...me, boot_id: 'boot-now', token: 'live' })}\n`;
    await writeFile(path, old);
    const names: string[] = [];
    const watcher = watch(lockDir, (_event, name) => names.push(String(name)));
    try {
      const waiting = acquireFileLock(path, { procRoot, timeoutMs: 300 });
      // Opening the FIFO for writing returns once the waiter has opened it to read: it is judging the old lock now.
      const fifo = await open(bootIdPath, 'w');
      // Meanwhile the old owner releases its lock, and a live process takes the path.
      await rm(path);
      await writeFile(path, live);
      // Later reads find a plain file; then the waiter learns the old lock was from another boot (its owner is gone).
      await writeFile(join(procRoot, 'boot_id.next'), 'boot-now\n');
      await rename(join(procRoot, 'boot_id.next'), bootIdPath);
      await fifo.writeFile('boot-now\n');
      await fifo.close();
      await assert.rejects(waiting, (error: AuditChainError) => error.code === 'LOCK_TIMEOUT');
      assert.equal(await readFile(path, 'utf8'), live, 'the live lock is where its owner left it');
      assert.deepEqual(
        names.filter((name) => name.endsWith('.stale')),
        [],
        'the live lock was never moved aside (a third process could have taken the path meanwhile)',
      );
    } finally {
      watcher.close();
    }
  });
});
