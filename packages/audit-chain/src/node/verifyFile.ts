/**
 * @module verifyFile
 * Verifies a JSONL log from raw bytes (a file, a socket, an HTTP body),
 * streaming, so a log of millions of entries verifies in O(log n) memory.
 */
import type { VerificationResult } from '../core/result.js';
import { type VerifyChainOptions, verifyJsonlWith } from '../core/verify.js';
import { fileChunks } from './lines.js';
import { nodeHashSuite } from './nodeHashSuite.js';

/**
 * Verifies JSONL bytes: every line, a line that is not UTF-8, a torn tail
 * (bytes after the last newline), and the checkpoint and trusted state when
 * given.
 *
 * @example
 * ```ts
 * const response = await fetch(url);
 * const result = await verifyJsonl(response.body!, { origin: 'example.com/app' });
 * ```
 */
export function verifyJsonl(chunks: AsyncIterable<Uint8Array | string>, options: VerifyChainOptions = {}): Promise<VerificationResult> {
  return verifyJsonlWith(nodeHashSuite, chunks, options);
}

/**
 * Verifies the log file at `path`.
 *
 * @example
 * ```ts
 * const result = await verifyFile('audit.jsonl', { origin: 'example.com/app' });
 * if (!result.valid) console.error(result.error_code, result.first_invalid_id);
 * ```
 */
export function verifyFile(path: string, options: VerifyChainOptions = {}): Promise<VerificationResult> {
  return verifyJsonl(fileChunks(path), options);
}
