/**
 * @module watchFile
 * Watches one file (the gateway's config file) through `fs.watch` on its
 * directory, filtered by the file's name. Watching the directory rather than
 * the file sees editors that save by writing a new file and renaming it over
 * the old one (the old inode, and a watch on it, is gone). Events come in
 * bursts (truncate, write, rename), so a change is reported once they have
 * been quiet for a moment, and once more a little later in case the last
 * write landed after the first report was read.
 *
 * Not chokidar: a watch closed while chokidar still had a change in flight
 * (its write-finish polling, an atomic-save re-add) could open a new
 * `fs.watch` after `close()`, which then kept the process alive forever.
 * `fs.watch` closes at once.
 */
import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/** A running file watch. */
export interface FileWatch {
  /** Resolves once changes are being seen. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link watchFile}. */
export interface WatchFileOptions {
  /** Quiet time after the last event before `onChange` runs (default 50 ms). */
  settleMs?: number;
  /** The second look after a report (default 200 ms). */
  recheckMs?: number;
}

/**
 * Calls `onChange` whenever `path` is created, changed or replaced. The
 * caller reads the file itself, and should skip a reading equal to the last
 * one: a change may be reported twice.
 *
 * @example
 * ```ts
 * const watch = watchFile('./config.yaml', () => reload());
 * await watch.ready;
 * ```
 */
export function watchFile(path: string, onChange: () => void, options: WatchFileOptions = {}): FileWatch {
  const file = resolve(path);
  const name = basename(file);
  const settleMs = options.settleMs ?? 50;
  const recheckMs = options.recheckMs ?? 200;
  let closed = false;
  let settle: ReturnType<typeof setTimeout> | undefined;
  let recheck: ReturnType<typeof setTimeout> | undefined;
  const report = () => {
    if (closed) return;
    onChange();
    clearTimeout(recheck);
    recheck = setTimeout(() => closed || onChange(), recheckMs);
    recheck.unref?.();
  };
  const watcher: FSWatcher = watch(dirname(file), (_event, changed) => {
    // Some platforms do not name the file; then any change in the directory may be ours.
    if (closed || (changed !== null && changed.toString() !== name)) return;
    clearTimeout(settle);
    settle = setTimeout(report, settleMs);
    settle.unref?.();
  });
  // The directory going away ends the watch; the caller keeps what it last read.
  watcher.on('error', () => undefined);
  return {
    ready: Promise.resolve(),
    async close() {
      closed = true;
      clearTimeout(settle);
      clearTimeout(recheck);
      watcher.close();
    },
  };
}
