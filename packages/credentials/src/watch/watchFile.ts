/**
 * @module watchFile
 * Watches one file (the gateway's config file) with chokidar 4, loaded on
 * first use so that importing the package never loads it. Editors that
 * save by writing a new file and renaming it over the old one are handled
 * (`atomic`), and a change is reported once the file has stopped growing.
 */

/** A running file watch. */
export interface FileWatch {
  /** Resolves once changes are being seen. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * Calls `onChange` whenever `path` is created or changed.
 *
 * @example
 * ```ts
 * const watch = watchFile('./config.yaml', () => reload());
 * await watch.ready;
 * ```
 */
export function watchFile(path: string, onChange: () => void): FileWatch {
  let closed = false;
  let watcher: { close(): Promise<void> } | undefined;
  const ready = import('chokidar').then(
    ({ watch }) =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        const w = watch(path, { ignoreInitial: true, atomic: true, awaitWriteFinish: { stabilityThreshold: 50, pollInterval: 10 } });
        let timer: ReturnType<typeof setTimeout> | undefined;
        watcher = {
          close: async () => {
            clearTimeout(timer);
            await w.close();
          },
        };
        const changed = () => {
          onChange();
          // chokidar can drop a change close behind another; look once more after things settle.
          clearTimeout(timer);
          timer = setTimeout(onChange, 200);
          timer.unref?.();
        };
        w.on('add', changed);
        w.on('change', changed);
        w.on('ready', () => resolve());
        w.on('error', () => undefined);
      }),
  );
  return {
    ready,
    async close() {
      closed = true;
      await ready;
      await watcher?.close();
    },
  };
}
