/**
 * Shared fixtures for the audit-chain tests: a realistic log with varied
 * fields, as stored lines and as the bytes of a JSONL file.
 */
import { AuditLog, MemoryAuditStore } from '../src/index.js';

export const ORIGIN = 'workflow:demo-repo/001-login';

/** Builds a log of `count` entries with nested objects, arrays, unicode and numbers. */
export async function buildLines(count: number, origin = ORIGIN): Promise<string[]> {
  const store = new MemoryAuditStore();
  let tick = Date.parse('2026-01-01T00:00:00Z');
  const log = new AuditLog(store, { origin, now: () => new Date((tick += 1000)) });
  for (let i = 0; i < count; i++) {
    await log.append({
      actor: i % 3 === 0 ? 'alice' : 'bøb 🚀',
      transition: 'PLANNED -> DOING',
      evidence_refs: [`ev-${i}`, i * 1.5],
      details: { wp: i, nested: { hash: 'not the chain hash', ok: i % 2 === 0 } },
    });
  }
  const lines: string[] = [];
  for await (const line of store.lines()) lines.push(line);
  return lines;
}

/** The file form of `lines`. */
export function toFileBytes(lines: readonly string[]): Buffer {
  return Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
}

/** Yields `bytes` in small chunks, so line splitting across chunk borders is exercised. */
export async function* chunked(bytes: Uint8Array, size = 97): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** 1-based line number of the byte at `offset`. */
export function lineOfByte(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  return line;
}
