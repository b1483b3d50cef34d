import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
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
