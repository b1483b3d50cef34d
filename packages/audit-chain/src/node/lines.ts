/**
 * @module lines
 * Reads a JSONL file as lines without buffering the file; the splitting
 * itself is `core/jsonlLines.ts`, shared with the `/web` entry.
 */
import { open } from 'node:fs/promises';
import { type LineEvent, splitLines } from '../core/jsonlLines.js';

export { type LineBatch, type LineEvent, splitLineBatches, splitLines } from '../core/jsonlLines.js';

/**
 * Reads a file in 64 KiB pieces through one reused buffer. Each piece is
 * decoded (or its unfinished line copied) before the next read, so reuse is
 * safe, and the process does not churn through a fresh native buffer per
 * read (which is what drives a stream's RSS up on a large file).
 */
export async function* fileChunks(path: string, chunkSize = 1 << 16): AsyncGenerator<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(chunkSize);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, chunkSize, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** Streams a file's lines. */
export function fileLines(path: string): AsyncGenerator<LineEvent> {
  return splitLines(fileChunks(path));
}
