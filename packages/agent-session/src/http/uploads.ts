/**
 * @module uploads
 * `POST /upload`: files for the agent to read (a screenshot, a log), stored
 * in one directory and answered with their path. The client's file name is
 * reduced to a safe base name behind a random prefix, so nothing can land
 * outside the directory or replace another file; files are created
 * exclusively (no symlink is followed) with mode 0600.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { AgentSessionError } from '../engine/errors.js';

/** Default largest upload: 10 MiB. */
export const DEFAULT_UPLOAD_LIMIT_BYTES = 10 * 1024 * 1024;
/** Default most files stored through `/upload`. */
export const DEFAULT_MAX_UPLOADS = 1000;
/** Default most bytes stored through `/upload` in all: 100 MiB. */
export const DEFAULT_UPLOAD_DIR_LIMIT_BYTES = 100 * 1024 * 1024;

/** `../../etc/passwd` → `passwd`; `my report (1).pdf` → `my_report__1_.pdf`. */
export function safeFileName(name: string): string {
  const base = basename(name.replaceAll('\\', '/'))
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '')
    .slice(-100);
  return base === '' ? 'upload' : base;
}

/**
 * Stores `bytes` under `dir` and returns the file's absolute path.
 *
 * @example
 * ```ts
 * const path = await storeUpload('/tmp/uploads', 'notes.txt', new TextEncoder().encode('hi'));
 * ```
 */
export async function storeUpload(dir: string, name: string, bytes: Uint8Array): Promise<string> {
  const root = resolve(dir);
  await mkdir(root, { recursive: true, mode: 0o700 });
  const target = join(root, `${randomBytes(4).toString('hex')}-${safeFileName(name)}`);
  if (dirname(target) !== root) throw new AgentSessionError('invalid_input', 'the file name is not allowed', { field: 'file' });
  await writeFile(target, bytes, { flag: 'wx', mode: 0o600 });
  return target;
}
