/**
 * @module @switchyard/runtime/fs
 * The one atomic file write: a temp file beside the target (opened
 * `O_CREAT | O_EXCL | O_NOFOLLOW`, so a planted file or symlink is refused,
 * never followed), fsynced, renamed over the target (a rename replaces a link,
 * never follows it), then the directory fsynced. A crash at any point leaves
 * the old file or the new one, never a torn one. The credential files, the
 * gateway's config and guarded hosts, the workflow's artifacts and the agent
 * session's state file are written through it. (`@switchyard/audit-chain`
 * keeps its own copy: it imports no workspace package.)
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';

/** Prefix of the temp files {@link writeFileAtomic} leaves while it writes, so that listings and watchers skip them. */
export const ATOMIC_TEMP_PREFIX = '.tmp-';

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Mode of the file (default 0600). */
  mode?: number;
  /**
   * Set `mode` exactly, whatever the umask (default true). With false the
   * umask may narrow it, as a plain `open` does.
   */
  exactMode?: boolean;
  /** Fsync the directory after the rename, making it durable (default true). */
  syncDirectory?: boolean;
}

/**
 * The temp file's name for `name`: starts with {@link ATOMIC_TEMP_PREFIX} and ends with
 * `.tmp` (both are what readers of the directories skip); the name is shortened so that
 * the temp name stays within a file system's 255-byte limit.
 */
function tempName(name: string): string {
  return `${ATOMIC_TEMP_PREFIX}${name.slice(0, 64)}-${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
}

/**
 * Writes `data` to `directory/name` atomically. Failures are the file system's own
 * errors (with their `code`); the temp file is removed.
 *
 * @example
 * ```ts
 * await writeFileAtomic('/etc/switchyard/auths', 'openai-1.json', text, { mode: 0o600 });
 * ```
 */
export async function writeFileAtomic(
  directory: string,
  name: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  const temp = `${directory}/${tempName(name)}`;
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(temp, flags, mode);
  try {
    try {
      // The umask may have narrowed `mode`; it can never have widened it, but set it exactly.
      if (options.exactMode !== false) await handle.chmod(mode);
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, `${directory}/${name}`);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  if (options.syncDirectory !== false) await syncDirectory(directory);
}

/**
 * Makes a rename or unlink in `directory` durable. Some file systems refuse
 * fsync on directories; the rename itself is still atomic, so that is ignored.
 *
 * @example
 * ```ts
 * await unlink('/var/lib/app/old.json');
 * await syncDirectory('/var/lib/app');
 * ```
 */
export async function syncDirectory(directory: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(directory, constants.O_RDONLY | constants.O_DIRECTORY);
    await handle.sync();
  } catch {
    // Refused: nothing else is lost.
  } finally {
    await handle?.close();
  }
}
