/**
 * @module safeFiles
 * File primitives for secrets on disk:
 * - **Atomic writes.** The runtime's one atomic write (`@switchyard/runtime/fs`):
 *   a temp file (mode 0600, `O_EXCL | O_NOFOLLOW`) in the same directory,
 *   fsynced, renamed over the target, the directory fsynced. A crash at any
 *   point leaves the old file or the new one, never a torn one.
 * - **Confined reads.** A name resolves inside the root or is refused:
 *   symlinks are followed only when their target stays inside the root (as
 *   Kubernetes secret mounts do), and anything that is not a regular file,
 *   such as a FIFO that would block a read forever, is refused.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir, realpath, stat, unlink } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { ATOMIC_TEMP_PREFIX, syncDirectory, writeFileAtomic as writeAtomically } from '@switchyard/runtime/fs';
import { CredentialsError } from '../errors.js';

export { syncDirectory };

/** Prefix of temp files, so that listings and watchers skip them. */
export const TEMP_PREFIX = ATOMIC_TEMP_PREFIX;

/** Writes `data` to `directory/name` atomically with `mode` (default 0600); a failure is `store_failed`. */
export async function writeFileAtomic(directory: string, name: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  try {
    await writeAtomically(directory, name, data, { mode });
  } catch (error) {
    throw new CredentialsError('store_failed', `could not write ${name}: ${(error as NodeJS.ErrnoException).code ?? 'I/O error'}`, {
      cause: error,
    });
  }
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
