/**
 * @module artifactStore
 * Feature artifacts (specs, plans, reports) stored as files under
 * `<root>/<feature_slug>/<relative_path>`, confined to the root, written
 * atomically, and addressed by `sha256:<hex>` hashes.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { relativePathSchema } from '../domain/inputs.js';
import { slugSchema } from '../domain/model.js';
import { InvalidArgumentError, NotFoundError, WorkflowError } from '../errors.js';
import { type ConfinedFileOptions, readConfinedFile, removeConfinedFile, writeConfinedFile } from './confinedFile.js';
import { confinedPath, isSymlink } from './safety.js';

/** Default artifact root, relative to the repository. */
export const DEFAULT_ARTIFACT_ROOT = join('.agileplus', 'artifacts');

/** An artifact's identity: `{path, hash, size_bytes}`. */
export interface Artifact {
  /** `<feature_slug>/<relative_path>`, with forward slashes. */
  path: string;
  hash: string;
  size_bytes: number;
}

/** `sha256:<hex>` of some bytes. */
export function artifactHash(content: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(content).digest('hex')}`;
}

/**
 * Files of features under one root.
 *
 * @example
 * ```ts
 * const artifacts = new ArtifactStore('/repo/.agileplus/artifacts');
 * const a = await artifacts.write('001-login', 'spec.md', '# Login'); // { path: '001-login/spec.md', hash: 'sha256:…', size_bytes: 7 }
 * ```
 */
export class ArtifactStore {
  readonly root: string;
  private readonly beforeOpen: ConfinedFileOptions['beforeOpen'];

  /**
   * @param options.beforeOpen runs between the path check and opening the file (see
   * `ConfinedFileOptions`): a seam for tests that swap a directory for a symlink there.
   */
  constructor(root: string, options: Pick<ConfinedFileOptions, 'beforeOpen'> = {}) {
    this.root = resolve(root);
    this.beforeOpen = options.beforeOpen;
  }

  /** How the confined file functions see an artifact: relative to the root, named `relative_path`. */
  private confined(featureSlug: string, relativePath: string): [string, string, ConfinedFileOptions] {
    return [this.root, join(featureSlug, relativePath), { field: 'relative_path', beforeOpen: this.beforeOpen }];
  }

  /** Checks slug and path and resolves the file, refusing escapes and symlinks. */
  async locate(featureSlug: string, relativePath: string): Promise<{ file: string; path: string }> {
    if (!slugSchema.safeParse(featureSlug).success)
      throw new InvalidArgumentError('feature_slug', `${JSON.stringify(featureSlug)} is not a feature slug`);
    const parsed = relativePathSchema.safeParse(relativePath);
    if (!parsed.success)
      throw new WorkflowError('path_escape', `relative_path: ${parsed.error.issues[0]!.message}`, { details: { field: 'relative_path' } });
    await mkdir(this.root, { recursive: true });
    const featureRoot = join(this.root, featureSlug);
    const file = await confinedPath(featureRoot, relativePath, 'relative_path');
    if (file === resolve(featureRoot)) throw new InvalidArgumentError('relative_path', 'names the feature directory, not a file');
    // The feature directory itself must not be a link out of the root either.
    await confinedPath(this.root, join(featureSlug, relativePath), 'relative_path');
    if (await isSymlink(file))
      throw new WorkflowError('path_escape', `relative_path: ${relativePath} is a symlink`, { details: { field: 'relative_path' } });
    return { file, path: relative(this.root, file).split(sep).join('/') };
  }

  /**
   * Writes an artifact atomically (temp file, fsync, rename) in its directory as opened and
   * checked, so a directory swapped for a symlink after the check cannot redirect it.
   */
  async write(featureSlug: string, relativePath: string, content: Uint8Array | string): Promise<Artifact> {
    const { path } = await this.locate(featureSlug, relativePath);
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
    const [root, file, options] = this.confined(featureSlug, relativePath);
    await writeConfinedFile(root, file, bytes, options);
    return { path, hash: artifactHash(bytes), size_bytes: bytes.length };
  }

  /** Reads an artifact's bytes and identity. */
  async read(featureSlug: string, relativePath: string): Promise<{ content: Buffer; artifact: Artifact }> {
    const { path } = await this.locate(featureSlug, relativePath);
    let content: Buffer;
    try {
      content = await readConfinedFile(...this.confined(featureSlug, relativePath));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError('artifact', path);
      throw error;
    }
    return { content, artifact: { path, hash: artifactHash(content), size_bytes: content.length } };
  }

  /** The identity of an artifact (hash and size). */
  async hash(featureSlug: string, relativePath: string): Promise<Artifact> {
    return (await this.read(featureSlug, relativePath)).artifact;
  }

  /** Compares an artifact with an expected hash. */
  async verify(
    featureSlug: string,
    relativePath: string,
    expectedHash: string,
  ): Promise<{ valid: boolean; expected: string; artifact: Artifact }> {
    if (!/^sha256:[0-9a-f]{64}$/.test(expectedHash)) throw new InvalidArgumentError('hash', 'expected "sha256:<64 hex>"');
    const artifact = await this.hash(featureSlug, relativePath);
    return { valid: artifact.hash === expectedHash, expected: expectedHash, artifact };
  }

  /** Deletes an artifact. */
  async remove(featureSlug: string, relativePath: string): Promise<{ path: string; removed: true }> {
    const { file, path } = await this.locate(featureSlug, relativePath);
    try {
      await lstat(file);
    } catch {
      throw new NotFoundError('artifact', path);
    }
    await removeConfinedFile(...this.confined(featureSlug, relativePath));
    return { path, removed: true };
  }

  /** Every artifact of a feature, sorted by path (symlinks are skipped, never followed). */
  async list(featureSlug: string): Promise<Artifact[]> {
    if (!slugSchema.safeParse(featureSlug).success)
      throw new InvalidArgumentError('feature_slug', `${JSON.stringify(featureSlug)} is not a feature slug`);
    const featureRoot = join(this.root, featureSlug);
    if (await isSymlink(featureRoot))
      throw new WorkflowError('path_escape', `${featureSlug} is a symlink`, { details: { field: 'feature_slug' } });
    const out: Artifact[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
      for (const entry of entries) {
        const full = join(dir, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (entry.isFile() && !(entry.name.startsWith('.') && entry.name.endsWith('.tmp'))) {
          const content = await readFile(full);
          out.push({
            path: relative(this.root, full).split(sep).join('/'),
            hash: artifactHash(content),
            size_bytes: (await stat(full)).size,
          });
        }
      }
    };
    await walk(featureRoot);
    return out.sort((a, b) => a.path.localeCompare(b.path));
  }
}
