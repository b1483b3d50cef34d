/**
 * @module stateFile
 * What the gateway's small state files in `auth-dir` share (`.guarded-hosts.json`,
 * `.client-keys.json`): reading one only when it is a regular file of bounded size, and writing
 * it coalesced, one atomic write in flight and at most one more carrying every change made
 * meanwhile.
 */
import { lstat, readFile } from 'node:fs/promises';

/** Why a state file could not be read; each store words its own refusal around `reason`. */
export class StateFileUnreadable extends Error {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
  }
}

/**
 * The text of `path`, or undefined when it does not exist. Throws {@link StateFileUnreadable} for a
 * symlink or anything but a regular file, a file over `maxBytes`, or an I/O error.
 *
 * @example
 * ```ts
 * const text = await readStateFile('./auths/.client-keys.json', 64 * 1024 * 1024);
 * ```
 */
export async function readStateFile(path: string, maxBytes: number): Promise<string | undefined> {
  try {
    const stats = await lstat(path);
    if (!stats.isFile()) throw new StateFileUnreadable('it is not a regular file');
    if (stats.size > maxBytes) throw new StateFileUnreadable(`it is larger than ${maxBytes} bytes`);
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (error instanceof StateFileUnreadable) throw error;
    throw new StateFileUnreadable((error as NodeJS.ErrnoException).code ?? 'I/O error', { cause: error });
  }
}

/**
 * Coalesces writes: `persist()` resolves once a write that started after the call has landed;
 * `settled` is the latest write, failures swallowed (for `close`).
 *
 * @example
 * ```ts
 * const writes = new CoalescedWrites(() => writeFileAtomically(path, render(), { mode: 0o600 }));
 * await writes.persist();
 * ```
 */
export class CoalescedWrites {
  private writing: Promise<void> = Promise.resolve();
  private dirty = false;

  constructor(private readonly write: () => Promise<void>) {}

  get settled(): Promise<void> {
    return this.writing;
  }

  persist(): Promise<void> {
    this.dirty = true;
    const next = this.writing.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      await this.write();
    });
    this.writing = next.catch(() => undefined);
    return next;
  }
}
