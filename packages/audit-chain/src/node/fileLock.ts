/**
 * @module fileLock
 * A lock file for writers in several processes: created with O_EXCL,
 * holding the owner's pid and a random token. A lock whose owner is dead
 * is broken by renaming it aside first, so two processes breaking the same
 * stale lock cannot both win.
 */
import { randomUUID } from 'node:crypto';
import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuditChainError } from '../core/errors.js';

/** Options of {@link acquireFileLock}. */
export interface FileLockOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** A lock whose content cannot be read is stale after this long (default 30 s). */
  staleMs?: number;
}

/** Releases a held lock. */
export type ReleaseLock = () => Promise<void>;

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function isStale(path: string, content: string, staleMs: number): Promise<boolean> {
  const pid = Number(content.split(' ')[0]);
  if (Number.isSafeInteger(pid) && pid > 0 && content.endsWith('\n')) return !isProcessAlive(pid);
  // Unreadable content: the owner died between creating and writing it, or is writing now.
  const info = await stat(path).catch(() => undefined);
  return info !== undefined && Date.now() - info.mtimeMs > staleMs;
}

async function breakIfStale(path: string, staleMs: number): Promise<void> {
  const content = await readFile(path, 'utf8').catch(() => undefined);
  if (content === undefined || !(await isStale(path, content, staleMs))) return;
  const aside = `${path}.${process.pid}.${randomUUID()}.stale`;
  try {
    await rename(path, aside);
  } catch {
    return; // someone else broke or released it first
  }
  const moved = await readFile(aside, 'utf8').catch(() => undefined);
  // If the lock changed hands between our read and the rename, we moved a live lock: put it back.
  if (moved !== content) await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

/**
 * Takes the lock at `path`, waiting with backoff while another live process
 * holds it.
 *
 * @throws {AuditChainError} `LOCK_TIMEOUT` when the wait exceeds the timeout.
 */
export async function acquireFileLock(path: string, options: FileLockOptions = {}): Promise<ReleaseLock> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 30_000;
  const token = `${process.pid} ${randomUUID()} ${Date.now()}\n`;
  const deadline = Date.now() + timeoutMs;
  let delay = 1;
  for (;;) {
    try {
      const handle = await open(path, 'wx', 0o644);
      try {
        await handle.writeFile(token);
      } finally {
        await handle.close();
      }
      return async () => {
        const content = await readFile(path, 'utf8').catch(() => undefined);
        if (content === token) await unlink(path).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    await breakIfStale(path, staleMs);
    if (Date.now() > deadline) {
      throw new AuditChainError('LOCK_TIMEOUT', `timed out after ${timeoutMs} ms waiting for the lock ${path}`);
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 25);
  }
}
