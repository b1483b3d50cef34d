/**
 * @module safety
 * Guards for everything handed to `git` or the file system on a caller's
 * behalf: values that could be read as options (`--upload-pack=…`), refs
 * git would refuse, and paths that leave their root (`..`, absolute paths,
 * symlinks pointing out).
 */
import { lstat, readlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path';
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
 * How many symlinks one resolution follows before giving up, as the kernel does
 * (Linux's `MAXSYMLINKS` is 40): a loop, or a chain too long to trust, is refused.
 */
const MAX_SYMLINK_HOPS = 40;

/** Thrown inside {@link physicalPath} when a chain of links does not end within the bound. */
class SymlinkLoop extends Error {}

/**
 * Thrown inside {@link physicalPath} when a component cannot be looked at for a reason other
 * than not existing (`ENOTDIR`, `EACCES`, `ELOOP`, ...): where the path leads is then unknown,
 * and an unknown destination is not one to write to.
 */
class Unverifiable extends Error {
  constructor(readonly errno: string) {
    super(errno);
  }
}

/** Why a component could not be looked at, in words, for {@link Unverifiable}'s message. */
const UNVERIFIABLE_REASONS: Record<string, string> = {
  ENOTDIR: 'a file on the way is used as a directory',
  EACCES: 'a directory on the way cannot be searched',
  EPERM: 'a directory on the way cannot be searched',
  ELOOP: 'too many levels of symlinks',
  ENAMETOOLONG: 'a name on the way is too long',
};

/** `lstat` or `readlink` of one component; only ENOENT means "missing", anything else is {@link Unverifiable}. */
async function inspect<T>(step: Promise<T>): Promise<T | undefined> {
  try {
    return await step;
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code;
    if (errno === 'ENOENT') return undefined;
    throw new Unverifiable(errno ?? 'unknown error');
  }
}

/**
 * Where `path` (absolute) really leads: each component that exists is looked at
 * with `lstat`, and a symlink is replaced by its target, relative to the link's
 * directory, whether or not that target exists. `realpath` stops at a dangling
 * link, yet writing through one creates its target, so the target has to count.
 * The components from the first missing one on are joined as written.
 */
async function physicalPath(path: string): Promise<string> {
  let current = parse(path).root;
  const pending = path.slice(current.length).split(sep);
  let hops = 0;
  let exists = true;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    if (!exists) {
      current = next;
      continue;
    }
    const info = await inspect(lstat(next));
    if (info === undefined) {
      // Missing: nothing below it exists yet.
      exists = false;
      current = next;
    } else if (info.isSymbolicLink()) {
      hops += 1;
      if (hops > MAX_SYMLINK_HOPS) throw new SymlinkLoop();
      const link = await inspect(readlink(next));
      // Removed between lstat and readlink: that is a race, not a missing file to accept.
      if (link === undefined) throw new Unverifiable('ENOENT');
      if (isAbsolute(link)) current = parse(link).root;
      pending.unshift(...link.slice(isAbsolute(link) ? parse(link).root.length : 0).split(sep));
    } else {
      current = next;
    }
  }
  return current;
}

/** True when `path` is `base` or below it (both absolute and normalized). */
export function isInside(base: string, path: string): boolean {
  const rel = relative(base, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Resolves `path` under `root` and refuses anything outside it, following every
 * symlink on the way, dangling ones included (their target is where a write
 * would land). A component that cannot be looked at for any reason but not
 * existing (`ENOTDIR`, `EACCES`, `ELOOP`) is refused too (`path_escape`,
 * `details.reason` the errno): where it leads is unknown.
 *
 * This is a check at one moment: a symlink swapped in afterwards is not seen.
 * Write and read through `confinedFile.ts`, which checks again on what it opened.
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
  if (!isInside(rootResolved, target))
    throw new WorkflowError('path_escape', `${field}: ${JSON.stringify(path)} is outside ${rootResolved}`, { details: { field } });
  const throughSymlink = () =>
    new WorkflowError('path_escape', `${field}: ${JSON.stringify(path)} leads outside ${rootResolved} through a symlink`, {
      details: { field },
    });
  try {
    // Both sides resolved the same way, so links above the root (macOS's /tmp) cancel out.
    const [realRoot, realTarget] = await Promise.all([physicalPath(rootResolved), physicalPath(target)]);
    if (!isInside(realRoot, realTarget)) throw throughSymlink();
  } catch (error) {
    if (error instanceof SymlinkLoop)
      throw new WorkflowError(
        'path_escape',
        `${field}: ${JSON.stringify(path)} goes through more than ${MAX_SYMLINK_HOPS} symlinks (a loop?)`,
        {
          details: { field },
        },
      );
    if (error instanceof Unverifiable)
      throw new WorkflowError(
        'path_escape',
        `${field}: ${JSON.stringify(path)} cannot be checked (${error.errno}: ${UNVERIFIABLE_REASONS[error.errno] ?? 'lstat failed'}), so it is refused`,
        { details: { field, reason: error.errno } },
      );
    throw error;
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
