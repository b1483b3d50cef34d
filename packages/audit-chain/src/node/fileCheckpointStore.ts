/**
 * @module fileCheckpointStore
 * Signed checkpoints in a sidecar file next to the log
 * (`<log>.checkpoints`), one JSON object per line:
 * `{"origin","size","root","note"}`. The notes can be exported verbatim.
 */
import { appendFile, open, readFile } from 'node:fs/promises';
import type { CheckpointStore } from '../core/auditLog.js';
import type { Checkpoint } from '../core/note.js';

/** A saved checkpoint and its signed note. */
export interface SavedCheckpoint {
  checkpoint: Checkpoint;
  note: string;
}

/** Path of the sidecar file of the log at `logPath`. */
export function checkpointSidecarPath(logPath: string): string {
  return `${logPath}.checkpoints`;
}

/**
 * Checkpoints kept in a JSONL sidecar file.
 *
 * @example
 * ```ts
 * const log = new AuditLog(store, { origin, checkpoints: new FileCheckpointStore(checkpointSidecarPath(path)) });
 * ```
 */
export class FileCheckpointStore implements CheckpointStore {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  async save(checkpoint: Checkpoint, note: string): Promise<void> {
    const line = `${JSON.stringify({ origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.root, note })}\n`;
    await appendFile(this.path, line, { mode: 0o644 });
    const handle = await open(this.path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /** Every saved checkpoint, oldest first; lines that do not parse are skipped. */
  async list(): Promise<SavedCheckpoint[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const saved: SavedCheckpoint[] = [];
    for (const line of text.split('\n')) {
      if (line.length === 0) continue;
      try {
        const { origin, size, root, note } = JSON.parse(line);
        if (typeof note === 'string') saved.push({ checkpoint: { origin, size, root, extensions: [] }, note });
      } catch {
        // A torn last line from a crash: ignore it, the previous checkpoints stand.
      }
    }
    return saved;
  }

  async latest(): Promise<SavedCheckpoint | undefined> {
    const all = await this.list();
    return all[all.length - 1];
  }
}
