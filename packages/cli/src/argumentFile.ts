/**
 * @module argumentFile
 * Reads a file a command-line option names (`--from-file`, `--config`).
 * A failure names the option and the path once, in words, instead of
 * Node's `ENOENT: no such file or directory, open '…'` after the path: a
 * file that is not there is the caller's typo, not found (exit 3).
 */
import { readFile } from 'node:fs/promises';
import { CliError } from './errors.js';

/** Why a file could not be read, in words; not found unless the reason is neither absence nor a directory. */
const REASONS: Record<string, { code: 'not_found' | 'internal'; words: string }> = {
  ENOENT: { code: 'not_found', words: 'no such file' },
  ENOTDIR: { code: 'not_found', words: 'no such file' },
  EISDIR: { code: 'not_found', words: 'a directory, not a file' },
  EACCES: { code: 'internal', words: 'permission denied' },
  EPERM: { code: 'internal', words: 'permission denied' },
};

/**
 * Reads `path` as UTF-8 for `option`.
 *
 * @example
 * ```ts
 * const spec = await readArgumentFile('/work/spec.md', '--from-file'); // CliError not_found "--from-file: no such file: /work/spec.md"
 * ```
 */
export async function readArgumentFile(path: string, option: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code ?? 'EIO';
    const reason = REASONS[errno] ?? { code: 'internal', words: `cannot read it (${errno})` };
    throw new CliError(
      reason.code,
      `${option}: ${reason.words}: ${path}`,
      { field: option.replace(/^--/, '').replace(/-/g, '_'), path },
      { cause: error },
    );
  }
}
