/**
 * @module lines
 * Splits a byte stream into JSONL lines without buffering the file, and
 * reports bytes after the last newline (a torn tail) separately from lines.
 */
import { open } from 'node:fs/promises';

/** One piece of a JSONL stream. */
export type LineEvent = { kind: 'line'; line: string } | { kind: 'torn'; text: string; byteLength: number };

/** The complete lines of one chunk, or the torn tail at the end. */
export type LineBatch = { kind: 'lines'; lines: string[] } | { kind: 'torn'; text: string; byteLength: number };

/**
 * Yields the newline-terminated lines of `chunks` a chunk at a time (one
 * await per chunk, not per line), then, if bytes follow the last newline,
 * one `torn` batch with them.
 */
export async function* splitLineBatches(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<LineBatch> {
  const decoder = new TextDecoder();
  let carry = '';
  for await (const chunk of chunks) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const lines: string[] = [];
    let start = 0;
    let newline = text.indexOf('\n');
    if (newline >= 0 && carry.length > 0) {
      lines.push(carry + text.slice(0, newline));
      carry = '';
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    while (newline >= 0) {
      lines.push(text.slice(start, newline));
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    carry += text.slice(start);
    if (lines.length > 0) yield { kind: 'lines', lines };
  }
  carry += decoder.decode();
  if (carry.length > 0) yield { kind: 'torn', text: carry, byteLength: Buffer.byteLength(carry) };
}

/** Line-at-a-time form of {@link splitLineBatches}. */
export async function* splitLines(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<LineEvent> {
  for await (const batch of splitLineBatches(chunks)) {
    if (batch.kind === 'torn') yield batch;
    else for (const line of batch.lines) yield { kind: 'line', line };
  }
}

/**
 * Reads a file in 64 KiB pieces through one reused buffer. Each piece is
 * decoded to a string before the next read, so reuse is safe, and the
 * process does not churn through a fresh native buffer per read (which is
 * what drives a stream's RSS up on a large file).
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
