/**
 * @module fileCredentialStore
 * The file `CredentialStore`: one JSON file per credential in the auth
 * directory (`auth-dir`, default `./auths`), named `<id>.json`.
 *
 * - Files are written atomically with mode 0600 (see {@link writeFileAtomic});
 *   the directory is created with mode 0700.
 * - Ids are confined to the directory: no separators, no leading dot, and
 *   symlinks only to targets inside it.
 * - A malformed or undecryptable file never fails a listing: it comes back
 *   in status `error` with a message.
 * - With `encryption`, secrets are written with AES-256-GCM (see
 *   {@link encodeCredentialFile}); plaintext files are still read, and
 *   {@link FileCredentialStore.rekey} moves every file to a new key.
 * - `watch` reports this store's own writes at once and, through `fs.watch`
 *   on the directory, changes made to it by anyone else.
 *
 * Revisions are checked within one process (a per-id lock); two processes
 * writing the same file race at rename granularity: one wins whole. Several
 * gateway nodes share credentials through the PostgreSQL store instead.
 *
 * An open store holds a claim on the directory (see `directoryClaim.ts`):
 * `rekey` refuses while another process has the directory open, and `open`
 * refuses while another process rekeys it.
 */
import { mkdir, readdir, realpath, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { EventEmitter } from 'eventemitter3';
import { type Credential, isSafeCredentialId, parseCredential } from '../credential.js';
import { type EncryptionKey, parseEncryptionKey } from '../encryption.js';
import { CredentialsError } from '../errors.js';
import { KeyedMutex } from '../util/keyedMutex.js';
import { watchDirectory } from '../watch/watchDirectory.js';
import { decodeCredentialFile, encodeCredentialFile, encryptedWith, revisionInFile, unreadableCredential } from './credentialFile.js';
import type { CredentialStore, DeleteOptions, PutOptions, StoreChange, Unsubscribe } from './credentialStore.js';
import { DirectoryClaim } from './directoryClaim.js';
import { checkExpected } from './memoryCredentialStore.js';
import { readConfined, removeStaleTempFiles, syncDirectory, writeFileAtomic } from './safeFiles.js';

/** Options of {@link FileCredentialStore.open}. */
export interface FileCredentialStoreOptions {
  /** The auth directory; created (mode 0700) when missing. */
  directory: string;
  /**
   * Encryption at rest (`auth.encryption.enabled` and `key`). `key` encrypts
   * every write; `previousKeys` may still be read (keep the old key there
   * until a rekey has finished).
   */
  encryption?: { key: string | EncryptionKey; previousKeys?: readonly (string | EncryptionKey)[] };
  /** Watch the directory for changes made by others while someone watches the store (default true). */
  watchExternal?: boolean;
  /** Files larger than this are refused (default 1 MiB). */
  maxFileBytes?: number;
}

/** A credential file, as the management API's `/auth-files` lists it. */
export interface AuthFileInfo {
  id: string;
  /** The file name (`<id>.json`). */
  name: string;
  size: number;
  /** Last modification (ISO 8601). */
  modified_at: string;
}

/** What {@link FileCredentialStore.rekey} did. */
export interface RekeyReport {
  /** Id of the key every file is now under; null when files are now plaintext. */
  key_id: string | null;
  /** Credentials rewritten. */
  rekeyed: number;
  /** Credentials already under the new key (an earlier, interrupted rekey moved them), left as they were. */
  already_current: number;
  /** Files left as they were, because they are unusable (malformed, refused); none of them held a readable secret. */
  skipped: { id: string; reason: string }[];
}

/** Options of {@link FileCredentialStore.rekey}. */
export interface FileRekeyOptions {
  /** Called after each file is rewritten: `rekeyed` of the `pending` files that needed it are done. */
  onProgress?: (progress: { rekeyed: number; pending: number }) => void | Promise<void>;
}

const STALE_TEMP_MS = 10 * 60_000;
const READ_CONCURRENCY = 32;

function toKey(key: string | EncryptionKey): EncryptionKey {
  return typeof key === 'string' ? parseEncryptionKey(key) : key;
}

/**
 * Credentials as files in a directory.
 *
 * @example
 * ```ts
 * const store = await FileCredentialStore.open({
 *   directory: './auths',
 *   encryption: { key: process.env.SWITCHYARD_AUTH_KEY! },
 * });
 * const credentials = await store.list();
 * ```
 */
export class FileCredentialStore implements CredentialStore {
  readonly backend = 'file' as const;
  /** Absolute path of the auth directory. */
  readonly directory: string;
  private readonly realDirectory: string;
  private readonly claim: DirectoryClaim;
  private writeKey: EncryptionKey | undefined;
  private readKeys: EncryptionKey[];
  private readonly maxFileBytes: number;
  private readonly watchExternal: boolean;
  private readonly mutex = new KeyedMutex();
  private readonly tombstones = new Map<string, number>();
  private readonly changes = new EventEmitter<{ change: [StoreChange] }>();
  private watcher: { close(): Promise<void> } | undefined;
  private watcherReady: Promise<void> | undefined;
  private closed = false;

  private constructor(directory: string, realDirectory: string, claim: DirectoryClaim, options: FileCredentialStoreOptions) {
    this.directory = directory;
    this.realDirectory = realDirectory;
    this.claim = claim;
    this.writeKey = options.encryption ? toKey(options.encryption.key) : undefined;
    this.readKeys = [...(this.writeKey ? [this.writeKey] : []), ...(options.encryption?.previousKeys ?? []).map(toKey)];
    this.maxFileBytes = options.maxFileBytes ?? 1024 * 1024;
    this.watchExternal = options.watchExternal ?? true;
  }

  /**
   * Opens (and creates) the directory, claims it (refusing with `in_use`
   * while another process rekeys it), and removes temp files left by
   * crashed writers.
   */
  static async open(options: FileCredentialStoreOptions): Promise<FileCredentialStore> {
    if (typeof options.directory !== 'string' || options.directory.length === 0) {
      throw new CredentialsError('invalid_config', 'auth-dir must be a directory path', { field: 'auth-dir' });
    }
    const directory = resolve(options.directory);
    try {
      await mkdir(directory, { recursive: true, mode: 0o700 });
    } catch (cause) {
      throw new CredentialsError('store_failed', `cannot create the auth directory ${directory}`, { cause });
    }
    await removeStaleTempFiles(directory, STALE_TEMP_MS);
    const realDirectory = await realpath(directory);
    return new FileCredentialStore(directory, realDirectory, await DirectoryClaim.take(directory, realDirectory), options);
  }

  /** Id of the key writes are encrypted with; null when encryption is off. */
  get keyId(): string | null {
    return this.writeKey?.id ?? null;
  }

  async list(): Promise<Credential[]> {
    this.assertOpen();
    const ids = await this.fileIds();
    const out: Credential[] = [];
    for (let i = 0; i < ids.length; i += READ_CONCURRENCY) {
      const batch = await Promise.all(ids.slice(i, i + READ_CONCURRENCY).map((id) => this.read(id)));
      for (const credential of batch) if (credential) out.push(credential);
    }
    return out;
  }

  /** The credential files: name, size and modification time (no content). */
  async files(): Promise<AuthFileInfo[]> {
    this.assertOpen();
    const out: AuthFileInfo[] = [];
    for (const id of await this.fileIds()) {
      try {
        const info = await stat(join(this.directory, `${id}.json`));
        if (info.isFile()) out.push({ id, name: `${id}.json`, size: info.size, modified_at: info.mtime.toISOString() });
      } catch {
        // Removed meanwhile.
      }
    }
    return out;
  }

  async get(id: string): Promise<Credential | undefined> {
    this.assertOpen();
    return this.read(this.checkId(id));
  }

  async put(credential: Credential, options: PutOptions = {}): Promise<Credential> {
    this.assertOpen();
    const id = this.checkId(credential.id);
    const validated = parseCredential(credential);
    return this.mutex.run(id, async () => {
      const current = await this.readRaw(id);
      const currentRevision = current === undefined ? null : revisionInFile(current);
      checkExpected(id, options.expectedRevision, currentRevision);
      const revision = Math.max(currentRevision ?? 0, this.tombstones.get(id) ?? 0) + 1;
      const stored: Credential = { ...validated, revision };
      await writeFileAtomic(this.directory, `${id}.json`, encodeCredentialFile(stored, this.writeKey));
      this.tombstones.delete(id);
      this.emit({ type: 'auth.upsert', id, revision, origin: 'local' });
      return stored;
    });
  }

  async delete(id: string, options: DeleteOptions = {}): Promise<boolean> {
    this.assertOpen();
    this.checkId(id);
    return this.mutex.run(id, async () => {
      const current = await this.readRaw(id);
      const currentRevision = current === undefined ? null : revisionInFile(current);
      if (options.expectedRevision !== undefined) checkExpected(id, options.expectedRevision, currentRevision);
      if (current === undefined) return false;
      try {
        await unlink(`${this.directory}/${id}.json`);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw new CredentialsError('store_failed', `could not delete ${id}.json`, { cause: error });
      }
      await syncDirectory(this.directory);
      const revision = (currentRevision ?? 0) + 1;
      this.tombstones.set(id, revision);
      this.emit({ type: 'auth.delete', id, revision, origin: 'local' });
      return true;
    });
  }

  /**
   * Re-encrypts every file under `newKey` (or writes them as plaintext when
   * `null`), and uses it for writes from then on. It refuses (`in_use`)
   * while another process has the directory open: that process could
   * rewrite a file between this read and this write, and lose either the
   * change or the new key. It first decrypts every file with the keys it
   * has and `newKey`; if any encrypted file cannot be decrypted, nothing is
   * written. Each file is replaced atomically, and files carry the id of
   * their key, so a crash part-way leaves every file readable with the old
   * key or the new one; running `rekey` again with the same keys skips the
   * files already moved and finishes the job.
   *
   * @example
   * ```ts
   * const report = await store.rekey(generateEncryptionKey());
   * console.log(`${report.rekeyed} files now under key ${report.key_id}`);
   * ```
   */
  async rekey(newKey: string | EncryptionKey | null, options: FileRekeyOptions = {}): Promise<RekeyReport> {
    this.assertOpen();
    const key = newKey === null ? undefined : toKey(newKey);
    return this.mutex.runExclusive(async () => {
      await this.claim.beginRekey();
      try {
        const report = await this.rekeyFiles(key, options);
        this.writeKey = key;
        this.readKeys = [...(key ? [key] : []), ...this.readKeys.filter((k) => k.id !== key?.id)];
        return report;
      } finally {
        await this.claim.endRekey();
      }
    });
  }

  watch(listener: (change: StoreChange) => void): Unsubscribe {
    this.assertOpen();
    this.changes.on('change', listener);
    if (this.watchExternal && !this.watcher) this.startWatcher();
    return () => {
      this.changes.off('change', listener);
      if (this.changes.listenerCount('change') === 0) void this.stopWatcher();
    };
  }

  /** Resolves once the directory watcher (started by the first `watch`) sees changes. */
  async watching(): Promise<void> {
    await this.watcherReady;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.changes.removeAllListeners();
    await this.stopWatcher();
    await this.claim.release();
  }

  // ---- internals -------------------------------------------------------

  private checkId(id: string): string {
    if (typeof id !== 'string' || !isSafeCredentialId(id)) {
      throw new CredentialsError(
        'path_not_allowed',
        'credential id must name a file inside the auth directory (no "/", "\\", leading "." or control characters)',
        {
          field: 'id',
        },
      );
    }
    return id;
  }

  private assertOpen(): void {
    if (this.closed) throw new CredentialsError('closed', 'the credential store is closed');
  }

  private async fileIds(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (cause) {
      throw new CredentialsError('store_failed', `cannot list the auth directory ${this.directory}`, { cause });
    }
    return names
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.slice(0, -'.json'.length))
      .filter(isSafeCredentialId)
      .sort();
  }

  private async readRaw(id: string): Promise<string | undefined> {
    const read = await readConfined(this.directory, this.realDirectory, `${id}.json`, this.maxFileBytes);
    return read.kind === 'file' ? read.text : undefined;
  }

  private async rekeyFiles(key: EncryptionKey | undefined, options: FileRekeyOptions): Promise<RekeyReport> {
    // The new key reads too: after an interrupted rekey, some files are under it already.
    const keys = key ? [key, ...this.readKeys.filter((k) => k.id !== key.id)] : this.readKeys;
    const pending: Credential[] = [];
    const skipped: RekeyReport['skipped'] = [];
    const undecryptable: string[] = [];
    let alreadyCurrent = 0;
    for (const id of await this.fileIds()) {
      const file = await this.readFile(id, keys);
      if (!file) continue;
      const { credential, text } = file;
      const underKey = text === undefined ? null : encryptedWith(text);
      if (credential.status === 'error' && credential.token === '') {
        if (underKey !== null) undecryptable.push(`${id}.json`);
        else skipped.push({ id, reason: credential.status_message ?? 'unreadable' });
      } else if (underKey === (key?.id ?? null)) {
        alreadyCurrent++;
      } else {
        pending.push(credential);
      }
    }
    if (undecryptable.length > 0) {
      throw new CredentialsError(
        'decryption_failed',
        `rekey stopped before writing anything: ${undecryptable.length} file(s) cannot be decrypted with the configured keys (${undecryptable.slice(0, 10).join(', ')})`,
      );
    }
    for (const [index, credential] of pending.entries()) {
      await writeFileAtomic(this.directory, `${credential.id}.json`, encodeCredentialFile(credential, key));
      await options.onProgress?.({ rekeyed: index + 1, pending: pending.length });
    }
    return { key_id: key?.id ?? null, rekeyed: pending.length, already_current: alreadyCurrent, skipped };
  }

  private async read(id: string): Promise<Credential | undefined> {
    return (await this.readFile(id, this.readKeys))?.credential;
  }

  /** A credential file decoded with `keys`, and its text when it could be read. */
  private async readFile(id: string, keys: readonly EncryptionKey[]): Promise<{ credential: Credential; text?: string } | undefined> {
    let read: Awaited<ReturnType<typeof readConfined>>;
    try {
      read = await readConfined(this.directory, this.realDirectory, `${id}.json`, this.maxFileBytes);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'I/O error';
      return { credential: unreadableCredential(id, { createdMs: 0, modifiedMs: 0 }, `cannot read the file (${code})`) };
    }
    if (read.kind === 'absent') return undefined;
    const times = read.stats
      ? { createdMs: read.stats.birthtimeMs || read.stats.mtimeMs, modifiedMs: read.stats.mtimeMs }
      : { createdMs: 0, modifiedMs: 0 };
    if (read.kind === 'refused') return { credential: unreadableCredential(id, times, `refused: ${read.reason}`) };
    return { credential: decodeCredentialFile(id, read.text, times, keys), text: read.text };
  }

  private emit(change: StoreChange): void {
    for (const listener of this.changes.listeners('change')) {
      try {
        listener(change);
      } catch {
        // Listeners report their own failures.
      }
    }
  }

  private startWatcher(): void {
    const watch = watchDirectory(
      this.directory,
      (name, change) => {
        const id = name.slice(0, -'.json'.length);
        if (isSafeCredentialId(id)) this.emit({ type: change === 'present' ? 'auth.upsert' : 'auth.delete', id, origin: 'external' });
      },
      { accept: (name) => !name.startsWith('.') && name.endsWith('.json') },
    );
    this.watcher = { close: async () => watch.close() };
    this.watcherReady = Promise.resolve();
  }

  private async stopWatcher(): Promise<void> {
    const watcher = this.watcher;
    this.watcher = undefined;
    await watcher?.close();
  }
}
