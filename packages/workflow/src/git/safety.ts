/**
 * @module safety
 * Guards for everything handed to `git` or the file system on a caller's
 * behalf: values that could be read as options (`--upload-pack=…`), refs
 * git would refuse, and paths that leave their root (`..`, absolute paths,
 * symlinks pointing out).
 */
import { lstat, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { WorkflowError } from '../errors.js';

/** Refuses empty values, option-like values and control characters. */
export function assertSafeArgument(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new WorkflowError('invalid_argument', `${field}: required`, { details: { field } });
  if (value.startsWith('-')) {
    throw new WorkflowError('unsafe_argument', `${field}: ${JSON.stringify(value)} looks like an option; values may not start with "-"`, {
      details: { field },
    });
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(value))
    throw new WorkflowError('unsafe_argument', `${field}: control characters are not allowed`, { details: { field } });
  return value;
}

/** A branch name git accepts (`git check-ref-format --branch` rules, checked here without a process). */
export function assertBranchName(value: unknown, field = 'name'): string {
  const name = assertSafeArgument(value, field);
  const bad =
    /[\s~^:?*[\\]/.test(name) ||
    name.includes('..') ||
    name.includes('@{') ||
    name === '@' ||
    name.endsWith('.') ||
    name.endsWith('/') ||
    name.startsWith('/') ||
    name.includes('//') ||
    name.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock')) ||
    name.length > 250;
  if (bad)
    throw new WorkflowError('unsafe_argument', `${field}: ${JSON.stringify(name)} is not a valid branch name`, { details: { field } });
  return name;
}

/** A revision: a ref, a commit id, `HEAD~1`, `stash@{0}`; no ranges, no options. */
export function assertRevision(value: unknown, field: string): string {
  const rev = assertSafeArgument(value, field);
  if (!/^[A-Za-z0-9_./~^@{}+-]{1,250}$/.test(rev) || rev.includes('..')) {
    throw new WorkflowError('unsafe_argument', `${field}: ${JSON.stringify(rev)} is not a revision (a branch, tag, commit id, HEAD~n)`, {
      details: { field },
    });
  }
  return rev;
}

/**
 * Resolves `path` under `root` and refuses anything outside it, following
 * symlinks of the parts that exist.
 *
 * @example
 * ```ts
 * await confinedPath('/repo', 'src/app.ts');   // '/repo/src/app.ts'
 * await confinedPath('/repo', '../etc/passwd'); // throws path_escape
 * ```
 */
export async function confinedPath(root: string, path: unknown, field = 'path'): Promise<string> {
  if (typeof path !== 'string' || path.length === 0)
    throw new WorkflowError('invalid_argument', `${field}: required`, { details: { field } });
  if (path.includes('\0')) throw new WorkflowError('path_escape', `${field}: NUL bytes are not allowed`, { details: { field } });
  const rootResolved = resolve(root);
  const target = isAbsolute(path) ? resolve(path) : resolve(rootResolved, path);
  const inside = (base: string, p: string) => {
    const rel = relative(base, p);
    return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
  };
  if (!inside(rootResolved, target))
    throw new WorkflowError('path_escape', `${field}: ${JSON.stringify(path)} is outside ${rootResolved}`, { details: { field } });
  // Follow symlinks of the deepest existing ancestor inside the root: a link there may point out of it.
  const realRoot = await realpath(rootResolved).catch(() => undefined);
  if (realRoot === undefined) return target; // nothing under a missing root exists, so nothing can be a link
  let probe = target;
  while (inside(rootResolved, probe)) {
    try {
      const real = await realpath(probe);
      if (!inside(realRoot, real))
        throw new WorkflowError('path_escape', `${field}: ${JSON.stringify(path)} leads outside ${rootResolved} through a symlink`, {
          details: { field },
        });
      break;
    } catch (error) {
      if (error instanceof WorkflowError) throw error;
      probe = dirname(probe);
    }
  }
  return target;
}

/** True when `path` exists and is a symlink. */
export async function isSymlink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}
