/**
 * @module confinedFile
 * Reads and writes of files confined to a root that stay confined when a
 * symlink is swapped in after {@link confinedPath} looked.
 *
 * `confinedPath` checks a path at one moment; whoever can write inside the
 * root can replace a directory on the way with a symlink out of it before the
 * path is opened. Node has no `openat`, so the gap is closed as far as it can be:
 *
 * - the parent directory is opened first, and what was opened (not the path)
 *   is checked to lie inside the root's real path;
 * - on Linux, the file is then named through that open descriptor
 *   (`/proc/self/fd/<n>/<name>`), which the kernel resolves from the directory
 *   held open, whatever has been renamed or linked since: the equivalent of
 *   `openat`. Elsewhere the directory's checked real path is used, which
 *   leaves a window between the check and the use;
 * - the last component is opened with `O_NOFOLLOW` (a symlink there is
 *   refused), and whole files are written to a temporary file beside the
 *   target and renamed over it (rename replaces a link, never follows it).
 *
 * What remains: directories created on the way (`mkdir -p`) follow symlinks,
 * so a swap during creation can leave empty directories outside the root
 * (never a file); files others create by path beside ours (audit-chain's
 * lock file next to the audit log) are not covered; and a directory moved out
 * of the root after it was opened takes its writes with it, as it would take
 * the file written a moment later.
 */
import type { Stats } from 'node:fs';
import { constants, existsSync } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readlink, realpath, rm, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { writeFileAtomic } from '@switchyard/runtime/fs';
import { InvalidArgumentError, WorkflowError } from '../errors.js';
import { confinedPath, isInside } from './safety.js';

/** Options of the confined reads and writes. */
export interface ConfinedFileOptions {
  /** The argument the path came from, named in errors (default `path`). */
  field?: string;
  /**
   * Runs after the path was checked and before anything is opened: the moment a
   * swapped symlink would redirect a plain path-based write. Tests swap a directory
   * here to show the write still stays inside the root.
   */
  beforeOpen?: (() => Promise<void>) | undefined;
}

/** Where the kernel lists this process's descriptors as links to what they are open on (Linux). */
const DESCRIPTORS = '/proc/self/fd';
const byDescriptor = existsSync(DESCRIPTORS);

function escaped(field: string, path: string, how: string): WorkflowError {
  return new WorkflowError('path_escape', `${field}: ${JSON.stringify(path)} ${how}`, { details: { field } });
}

/**
 * The real path of what `handle` (opened at `opened`, for the caller's `given` path) is
 * open on, checked to lie inside `realRoot`. On
 * Linux the kernel says where the descriptor is; elsewhere the path's real path
 * must be the very file the handle holds (same device and inode).
 */
async function openedInside(handle: FileHandle, opened: string, realRoot: string, field: string, given: string): Promise<string> {
  let where: string;
  if (byDescriptor) {
    where = await readlink(`${DESCRIPTORS}/${handle.fd}`);
  } else {
    where = await realpath(opened);
    const [held, named] = await Promise.all([handle.stat(), stat(where)]);
    if (held.dev !== named.dev || held.ino !== named.ino) throw escaped(field, given, 'changed while it was being opened');
  }
  if (!isInside(realRoot, where)) throw escaped(field, given, `leads outside ${realRoot} (it changed after it was checked)`);
  return where;
}

/** A directory held open, checked to lie inside its root; names in it resolve through the held descriptor where the platform allows. */
class ConfinedDirectory {
  private constructor(
    private readonly handle: FileHandle,
    private readonly base: string,
  ) {}

  static async open(realRoot: string, dir: string, field: string, given: string): Promise<ConfinedDirectory> {
    const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const where = await openedInside(handle, dir, realRoot, field, given);
      return new ConfinedDirectory(handle, byDescriptor ? `${DESCRIPTORS}/${handle.fd}` : where);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The path that names this directory (through the held descriptor where the platform allows). */
  get path(): string {
    return this.base;
  }

  /** The path that names `name` inside this directory. */
  entry(name: string): string {
    return `${this.base}/${name}`;
  }

  /** Makes a rename in the directory durable; some platforms refuse to sync a directory, which loses nothing else. */
  sync(): Promise<void> {
    return this.handle.sync().catch(() => undefined);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/**
 * Checks `path` under `root` and opens its parent directory, confined (creating the
 * directories on the way first with `createParents`); the path must name a file, not the root.
 */
async function confinedParent(
  root: string,
  path: string,
  options: ConfinedFileOptions & { createParents?: boolean },
): Promise<{ file: string; dir: ConfinedDirectory; field: string }> {
  const field = options.field ?? 'path';
  const file = await confinedPath(root, path, field);
  if (file === resolve(root)) throw new InvalidArgumentError(field, 'names the root directory, not a file');
  if (options.createParents) await mkdir(dirname(file), { recursive: true });
  const realRoot = await realpath(root);
  await options.beforeOpen?.();
  return { file, dir: await ConfinedDirectory.open(realRoot, dirname(file), field, path), field };
}

/** The refusal of anything but a regular file (a directory, a FIFO, a socket, a device), naming the field. */
function notRegularFile(field: string, path: string, stats: Stats): WorkflowError {
  return new WorkflowError('not_found', `${field} ${JSON.stringify(path)} is ${fileKind(stats)}, not a regular file`, {
    details: { field },
  });
}

/**
 * Explains a failed open of `entry` for {@link openConfinedFile}: a symlink is an escape;
 * a FIFO without a reader (ENXIO under O_NONBLOCK) or a directory (EISDIR) is not a regular file.
 */
async function refuseOpen(error: unknown, entry: string, field: string, path: string): Promise<never> {
  const code = (error as NodeJS.ErrnoException).code;
  // O_NOFOLLOW reports a symlink in the last component as ELOOP.
  if (code === 'ELOOP') throw escaped(field, path, 'is a symlink');
  if (code === 'ENXIO' || code === 'EISDIR') {
    const stats = await lstat(entry).catch(() => undefined);
    if (stats && !stats.isFile()) throw notRegularFile(field, path, stats);
  }
  throw error;
}

/**
 * Writes a whole file under `root`, atomically (temporary file, fsync, rename),
 * creating its directories; returns the file's path.
 *
 * @example
 * ```ts
 * await writeConfinedFile('/repo/.agileplus/artifacts', '001-login/spec.md', '# Login');
 * ```
 */
export async function writeConfinedFile(
  root: string,
  path: string,
  content: Uint8Array | string,
  options: ConfinedFileOptions & { mode?: number } = {},
): Promise<string> {
  const { file, dir } = await confinedParent(root, path, { ...options, createParents: true });
  try {
    // The directory is synced through the handle held open, not by reopening its path.
    await writeFileAtomic(dir.path, basename(file), content, { mode: options.mode ?? 0o644, exactMode: false, syncDirectory: false });
    await dir.sync();
  } finally {
    await dir.close();
  }
  return file;
}

/**
 * Opens a file under `root` with `flags` (`fs.constants`), never through a symlink in
 * its last component (refused, `path_escape`). The parent directory must exist. Only a
 * regular file is opened: anything else (a directory, a FIFO, a socket, a device) is
 * refused as `not_found` with `details.field`, and the open never blocks, so a FIFO
 * planted where a log is appended cannot hang the writer waiting for a reader.
 *
 * @example
 * ```ts
 * const { O_WRONLY, O_APPEND, O_CREAT } = fs.constants;
 * const handle = await openConfinedFile('/repo/.git', 'info/exclude', O_WRONLY | O_APPEND | O_CREAT);
 * ```
 */
export async function openConfinedFile(
  root: string,
  path: string,
  flags: number,
  options: ConfinedFileOptions & { mode?: number } = {},
): Promise<FileHandle> {
  const { file, dir, field } = await confinedParent(root, path, options);
  const entry = dir.entry(basename(file));
  try {
    // O_NONBLOCK: a plain open of a FIFO for writing waits for a reader, possibly forever; this one
    // fails at once (ENXIO) or, with a reader there, opens and the fstat below refuses it. Regular
    // files read and write the same with or without the flag, so the handle keeps it.
    const handle = await open(entry, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, options.mode ?? 0o644).catch((error: unknown) =>
      refuseOpen(error, entry, field, path),
    );
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw notRegularFile(field, path, stats);
      return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
  } finally {
    await dir.close();
  }
}

/** What a non-regular file is, in words. */
function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'not a file';
}

/**
 * Reads a file under `root`. Symlinks that stay inside the root are followed, as
 * {@link confinedPath} allows; what was opened is checked to be inside the root
 * before a byte is read. Only a regular file is read: anything else (a directory,
 * a FIFO, a socket, a device) is refused as `not_found` with `details.field`, and
 * the open never blocks, so a FIFO with no writer cannot hang the caller.
 *
 * @example
 * ```ts
 * const spec = await readConfinedFile('/repo', 'docs/spec.md', { field: 'from_file' });
 * ```
 */
export async function readConfinedFile(root: string, path: string, options: ConfinedFileOptions = {}): Promise<Buffer> {
  const field = options.field ?? 'path';
  const file = await confinedPath(root, path, field);
  const realRoot = await realpath(root);
  await options.beforeOpen?.();
  // O_NONBLOCK: a plain open of a FIFO waits for a writer, possibly forever; this one returns at
  // once and the fstat below refuses it. Regular files read the same with or without the flag.
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    await openedInside(handle, file, realRoot, field, path);
    const stats = await handle.stat();
    if (!stats.isFile()) throw notRegularFile(field, path, stats);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * Removes a file under `root` (never what a symlink in its last component points at:
 * `unlink` removes the link itself), through its confined parent directory.
 *
 * @example
 * ```ts
 * await removeConfinedFile('/repo/.agileplus/artifacts', '001-login/old-plan.md');
 * ```
 */
export async function removeConfinedFile(root: string, path: string, options: ConfinedFileOptions = {}): Promise<void> {
  const { file, dir } = await confinedParent(root, path, options);
  try {
    await rm(dir.entry(basename(file)));
  } finally {
    await dir.close();
  }
}
