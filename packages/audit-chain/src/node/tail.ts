/**
 * @module tail
 * Reads the end of a JSONL file without reading all of it: the last
 * complete line, and whether bytes follow it (a torn tail).
 */
import type { FileHandle } from 'node:fs/promises';

/** The end of a JSONL file. */
export interface FileTail {
  /** File size in bytes. */
  size: number;
  /** Byte offset just after the last newline (0 when there is none). */
  completeBytes: number;
  /** The last newline-terminated line, without its newline, if any. */
  lastLine: string | undefined;
  /** Bytes after the last newline, decoded; empty when the file ends cleanly. */
  torn: string;
}

const BLOCK = 64 * 1024;

/** Finds the last newline at or before `end` (exclusive), or -1. */
async function lastNewlineBefore(handle: FileHandle, end: number): Promise<number> {
  let position = end;
  const buffer = Buffer.alloc(BLOCK);
  while (position > 0) {
    const start = Math.max(0, position - BLOCK);
    const length = position - start;
    const { bytesRead } = await handle.read(buffer, 0, length, start);
    const at = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (at >= 0) return start + at;
    position = start;
  }
  return -1;
}

async function readRange(handle: FileHandle, start: number, end: number): Promise<string> {
  const buffer = Buffer.alloc(end - start);
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesRead } = await handle.read(buffer, offset, buffer.length - offset, start + offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
  }
  return buffer.subarray(0, offset).toString('utf8');
}

/** Reads the tail of the file open on `handle`. */
export async function readTail(handle: FileHandle): Promise<FileTail> {
  const { size } = await handle.stat();
  if (size === 0) return { size, completeBytes: 0, lastLine: undefined, torn: '' };
  const lastNewline = await lastNewlineBefore(handle, size);
  const torn = lastNewline + 1 < size ? await readRange(handle, lastNewline + 1, size) : '';
  if (lastNewline < 0) return { size, completeBytes: 0, lastLine: undefined, torn };
  const previousNewline = await lastNewlineBefore(handle, lastNewline);
  const lastLine = await readRange(handle, previousNewline + 1, lastNewline);
  return { size, completeBytes: lastNewline + 1, lastLine, torn };
}
