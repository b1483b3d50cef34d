/**
 * @module repair
 * Repairs a torn JSONL log: the only damage a crash mid-append can do. A
 * tail that is a complete, valid next entry merely missing its newline is
 * kept (the newline is added); anything else after the last newline is cut.
 * A complete entry is never dropped.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { canonicalizeWithout } from '../core/canonicalize.js';
import { genesisHashWith } from '../core/entry.js';
import { acquireFileLock } from './fileLock.js';
import { nodeHashSuite } from './nodeHashSuite.js';
import { readTail } from './tail.js';

/** What {@link repairJsonlFile} did. */
export interface RepairResult {
  action: 'none' | 'completed-line' | 'truncated';
  /** Bytes removed from the end of the file. */
  removed_bytes: number;
  /** Complete lines in the file afterwards. */
  message: string;
}

/** True when `text` is a canonical entry that continues `previous` (or starts the log). */
function isValidNextEntry(text: string, previousLine: string | undefined, origin: string | undefined): boolean {
  let entry: Record<string, unknown>;
  let previous: { id: number; hash: string } | undefined;
  try {
    entry = JSON.parse(text);
    previous = previousLine === undefined ? undefined : JSON.parse(previousLine);
  } catch {
    return false;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return false;
  const expectedId = previous ? previous.id + 1 : 1;
  if (entry.id !== expectedId) return false;
  if (previous && entry.prev_hash !== previous.hash) return false;
  if (!previous && origin !== undefined && entry.prev_hash !== genesisHashWith(nodeHashSuite, origin)) return false;
  try {
    const { full, without } = canonicalizeWithout(entry, 'hash');
    return full === text && nodeHashSuite.leafHex(without) === entry.hash;
  } catch {
    return false;
  }
}

/**
 * Repairs the log at `path` in place, under the same lock file writers use.
 *
 * @example
 * ```ts
 * const { action } = await repairJsonlFile('audit.jsonl');
 * ```
 */
export async function repairJsonlFile(
  path: string,
  options: {
    origin?: string;
    /** Opens the log for reading and writing, not creating it (default `open(path, 'r+')`); for example one that refuses a symlink. */
    openFile?: (path: string) => Promise<FileHandle>;
  } = {},
): Promise<RepairResult> {
  const release = await acquireFileLock(`${path}.lock`);
  let handle: FileHandle;
  try {
    handle = await (options.openFile ?? ((file: string) => open(file, 'r+')))(path);
  } catch (error) {
    await release();
    throw error;
  }
  try {
    const tail = await readTail(handle);
    if (tail.torn.length === 0) return { action: 'none', removed_bytes: 0, message: 'the file ends with a complete line' };
    if (isValidNextEntry(tail.torn, tail.lastLine, options.origin)) {
      await handle.write('\n', tail.size);
      await handle.datasync();
      return { action: 'completed-line', removed_bytes: 0, message: 'the last entry was complete but lacked its newline; added it' };
    }
    await handle.truncate(tail.completeBytes);
    await handle.datasync();
    const removed = tail.size - tail.completeBytes;
    return { action: 'truncated', removed_bytes: removed, message: `removed ${removed} bytes of an incomplete last line` };
  } finally {
    await handle.close();
    await release();
  }
}
