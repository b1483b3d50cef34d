/**
 * @module safeFiles
 * File primitives for secrets on disk:
 * - **Atomic writes.** Write a temp file (mode 0600, `O_EXCL`) in the same
 *   directory, fsync it, rename it over the target, fsync the directory. A
 *   crash at any point leaves the old file or the new one, never a torn one.
 * - **Confined reads.** A name resolves inside the root or is refused:
 *   symlinks are followed only when their target stays inside the root (as
 *   Kubernetes secret mounts do), and anything that is not a regular file,
 *   such as a FIFO that would block a read forever, is refused.
 */
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir, realpath, rename, stat, unlink } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { CredentialsError } from '../errors.js';

/** Prefix of temp files, so that listings and watchers skip them. */
export const TEMP_PREFIX = '.tmp-';

/** Writes `data` to `directory/name` atomically with `mode` (default 0600). */
export async function writeFileAtomic(directory: string, name: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const temp = join(directory, `${TEMP_PREFIX}${name}-${process.pid}-${randomBytes(6).toString('hex')}`);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(temp, flags, mode);
  try {
    try {
      // The umask may have narrowed `mode`; it can never have widened it, but set it exactly.
      await handle.chmod(mode);
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, join(directory, name));
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new CredentialsError('store_failed', `could not write ${name}: ${(error as NodeJS.ErrnoException).code ?? 'I/O error'}`, {
      cause: error,
    });
  }
  await syncDirectory(directory);
}

/** Removes the temp files in `directory` older than `maxAgeMs`: left by writers that crashed (younger ones may still be in use). */
export async function removeStaleTempFiles(directory: string, maxAgeMs: number): Promise<void> {
  const now = Date.now();
  for (const name of await readdir(directory)) {
    if (!name.startsWith(TEMP_PREFIX)) continue;
    try {
      const info = await stat(join(directory, name));
      if (now - info.mtimeMs > maxAgeMs) await unlink(join(directory, name));
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}

/** Makes a rename or unlink in `directory` durable. */
export async function syncDirectory(directory: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(directory, constants.O_RDONLY | constants.O_DIRECTORY);
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on directories; the rename itself is still atomic.
  } finally {
    await handle?.close();
  }
}

/** What {@link readConfined} found. */
export type ConfinedRead =
  | { kind: 'file'; text: string; stats: Stats }
  | { kind: 'absent' }
  | { kind: 'refused'; reason: string; stats: Stats | undefined };

/**
 * Reads `root/name` if it is a regular file inside `rootReal` (the root's
 * real path), at most `maxBytes` long.
 */
export async function readConfined(root: string, rootReal: string, name: string, maxBytes: number): Promise<ConfinedRead> {
  const path = join(root, name);
  let linkStats: Stats;
  try {
    linkStats = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw error;
  }
  let target = path;
  if (linkStats.isSymbolicLink()) {
    try {
      target = await realpath(path);
    } catch {
      return { kind: 'refused', reason: 'a symlink whose target does not exist', stats: undefined };
    }
    if (!target.startsWith(rootReal + sep))
      return { kind: 'refused', reason: 'a symlink that points outside the auth directory', stats: undefined };
  }
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NOFOLLOW: the target was resolved above, so a link swapped in since is refused, not followed.
    // O_NONBLOCK: a FIFO swapped in since the check cannot block the open.
    handle = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'absent' };
    if (code === 'ELOOP') return { kind: 'refused', reason: 'a symlink (changed while reading)', stats: undefined };
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { kind: 'refused', reason: 'not a regular file', stats };
    if (stats.size > maxBytes) return { kind: 'refused', reason: `larger than ${maxBytes} bytes`, stats };
    return { kind: 'file', text: await handle.readFile('utf8'), stats };
  } finally {
    await handle.close();
  }
}
