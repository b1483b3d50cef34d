/**
 * @module watchDirectory
 * Watches the top level of a directory through `fs.watch` and reports, per
 * file name, whether the file is there or gone once its burst of events has
 * settled. `fs.watch` names the file and says little else (`rename` for a
 * create, a delete or a rename over it, `change` for a write), so the answer
 * comes from a `stat` after the burst.
 *
 * Not chokidar: a chokidar watch closed while it still had a change in
 * flight (a file added just before `close()`) could open a new `fs.watch`
 * afterwards, which then kept the process alive forever; a clean-clone CI
 * run hung on it. `fs.watch` closes at once, and nothing here acts after
 * `close()`.
 */
import { type FSWatcher, watch } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/** What became of a file. */
export type DirectoryEntryChange = 'present' | 'gone';

/** Options of {@link watchDirectory}. */
export interface WatchDirectoryOptions {
  /** Names to report (others are ignored). */
  accept: (name: string) => boolean;
  /** Quiet time after a name's last event before it is looked at (default 50 ms). */
  settleMs?: number;
}

/** A running directory watch. */
export interface DirectoryWatch {
  close(): void;
}

/**
 * Calls `onChange(name, 'present' | 'gone')` for each accepted file of
 * `directory` that was created, written, renamed over or deleted.
 *
 * @example
 * ```ts
 * const watch = watchDirectory('./auths', (name, change) => console.log(name, change), { accept: (n) => n.endsWith('.json') });
 * ```
 */
export function watchDirectory(
  directory: string,
  onChange: (name: string, change: DirectoryEntryChange) => void,
  options: WatchDirectoryOptions,
): DirectoryWatch {
  const settleMs = options.settleMs ?? 50;
  const settling = new Map<string, ReturnType<typeof setTimeout>>();
  let closed = false;
  const look = async (name: string) => {
    settling.delete(name);
    let change: DirectoryEntryChange;
    try {
      change = (await stat(join(directory, name))).isFile() ? 'present' : 'gone';
    } catch {
      change = 'gone';
    }
    if (!closed) onChange(name, change);
  };
  const watcher: FSWatcher = watch(directory, (_event, filename) => {
    const name = filename?.toString();
    if (closed || name === undefined || !options.accept(name)) return;
    clearTimeout(settling.get(name));
    const timer = setTimeout(() => void look(name), settleMs);
    timer.unref?.();
    settling.set(name, timer);
  });
  // The directory going away ends the watch; what was read stays.
  watcher.on('error', () => undefined);
  return {
    close() {
      closed = true;
      for (const timer of settling.values()) clearTimeout(timer);
      settling.clear();
      watcher.close();
    },
  };
}
