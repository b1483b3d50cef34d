/**
 * @module fileSignInDirectory
 * The `SignInDirectory` of a single gateway: one file per device sign-in
 * in a directory of its own (the gateway uses `auth-dir/.sign-ins`), so a
 * gateway that restarts, or crashed, answers the sign-ins it was running
 * as `interrupted` instead of not knowing them.
 *
 * A file holds the public status only ({@link publicSignInStatus} copies
 * it field by field): never the device code, a token or a client secret.
 * Files are mode 0600 in a 0700 directory, written atomically; a name is
 * the sign-in id, which must be base64url, so no id leaves the directory.
 * A cancel request wakes this process's listeners at once; another process
 * on the same directory sees the flag at its next check
 * (`cancelCheckIntervalMs`), as a cluster node that missed a notification
 * does.
 */
import { mkdir, readdir, realpath, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { CredentialsError } from '../errors.js';
import { readConfined, writeFileAtomic } from '../store/safeFiles.js';
import { KeyedMutex } from '../util/keyedMutex.js';
import {
  INTERRUPTED_ERROR,
  publicSignInStatus,
  type SignInDirectory,
  type SignInRecord,
  type SignInRecordWrite,
} from './signInDirectory.js';
import type { SignInState } from './signInSessions.js';

/** Session ids are 128 random bits in base64url; anything else names no file. */
const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
const STATES: readonly SignInState[] = ['pending', 'succeeded', 'failed', 'cancelled'];
const RECORD_MAX_BYTES = 64 * 1024;

/**
 * Device sign-ins kept in files, for one gateway across its restarts.
 *
 * @example
 * ```ts
 * const signInDirectory = await FileSignInDirectory.open('./auths/.sign-ins');
 * const manager = new CredentialManager({ store, signInDirectory });
 * await manager.start(); // marks the sign-ins pending before a restart as interrupted
 * ```
 */
export class FileSignInDirectory implements SignInDirectory {
  private readonly handlers = new Set<(id: string) => void>();
  private readonly mutex = new KeyedMutex();
  private closed = false;

  private constructor(
    /** Absolute path of the directory. */
    readonly directory: string,
    private readonly realDirectory: string,
  ) {}

  /** Opens the directory, creating it (mode 0700) when missing. */
  static async open(directory: string): Promise<FileSignInDirectory> {
    const absolute = resolve(directory);
    try {
      await mkdir(absolute, { recursive: true, mode: 0o700 });
      return new FileSignInDirectory(absolute, await realpath(absolute));
    } catch (cause) {
      throw new CredentialsError('store_failed', `cannot create the sign-in directory ${absolute}`, { cause });
    }
  }

  async put(record: SignInRecordWrite): Promise<void> {
    const id = this.checkId(record.id);
    await this.mutex.run(id, async () => {
      const cancelRequested = (await this.read(id))?.cancel_requested ?? false;
      await this.write({
        ...publicSignInStatus(record),
        node_id: record.node_id,
        cancel_requested: cancelRequested,
        forget_at: record.forget_at,
      });
    });
  }

  async get(id: string, now: number): Promise<SignInRecord | undefined> {
    this.assertOpen();
    if (!ID_PATTERN.test(id)) return undefined;
    const record = await this.read(id);
    return record && Date.parse(record.forget_at) > now ? record : undefined;
  }

  async requestCancel(id: string, now: number): Promise<SignInRecord | undefined> {
    this.assertOpen();
    if (!ID_PATTERN.test(id)) return undefined;
    const record = await this.mutex.run(id, async () => {
      const current = await this.read(id);
      if (!current || Date.parse(current.forget_at) <= now || current.state !== 'pending') return current;
      const flagged = { ...current, cancel_requested: true };
      await this.write(flagged);
      return flagged;
    });
    if (!record || Date.parse(record.forget_at) <= now) return undefined;
    if (record.cancel_requested && record.state === 'pending') for (const handler of [...this.handlers]) handler(id);
    return record;
  }

  onCancelRequest(handler: (id: string) => void): () => void {
    // A wrapper per subscription, so one function subscribed twice is two subscriptions.
    const entry = (id: string) => handler(id);
    this.handlers.add(entry);
    return () => this.handlers.delete(entry);
  }

  async interrupt(nodeId: string, finishedAt: string, forgetAt: string): Promise<number> {
    let count = 0;
    for (const id of await this.ids()) {
      await this.mutex.run(id, async () => {
        const record = await this.read(id);
        if (record?.node_id !== nodeId || record.state !== 'pending') return;
        await this.write({ ...record, state: 'failed', finished_at: finishedAt, forget_at: forgetAt, error: { ...INTERRUPTED_ERROR } });
        count++;
      });
    }
    return count;
  }

  /** Removes the records whose `forget_at` has come, and files that hold no record. */
  async prune(now: number): Promise<void> {
    for (const id of await this.ids()) {
      await this.mutex.run(id, async () => {
        const record = await this.read(id);
        if (record && Date.parse(record.forget_at) > now) return;
        await unlink(join(this.directory, `${id}.json`)).catch(() => undefined);
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
  }

  private assertOpen(): void {
    if (this.closed) throw new CredentialsError('closed', 'the sign-in directory is closed');
  }

  private checkId(id: string): string {
    this.assertOpen();
    if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
      throw new CredentialsError('invalid_argument', 'a sign-in id is 1 to 128 base64url characters', { field: 'id' });
    }
    return id;
  }

  private async ids(): Promise<string[]> {
    this.assertOpen();
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (cause) {
      throw new CredentialsError('store_failed', `cannot list the sign-in directory ${this.directory}`, { cause });
    }
    return names
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.slice(0, -'.json'.length))
      .filter((id) => ID_PATTERN.test(id));
  }

  private async write(record: SignInRecord): Promise<void> {
    await writeFileAtomic(this.directory, `${record.id}.json`, `${JSON.stringify(record)}\n`);
  }

  /** The record in `<id>.json`; undefined when there is none, or the file holds no record (it is not trusted further). */
  private async read(id: string): Promise<SignInRecord | undefined> {
    let text: string;
    try {
      const read = await readConfined(this.directory, this.realDirectory, `${id}.json`, RECORD_MAX_BYTES);
      if (read.kind !== 'file') return undefined;
      text = read.text;
    } catch (cause) {
      throw new CredentialsError('store_failed', `cannot read the sign-in ${id}`, { cause });
    }
    try {
      const raw = JSON.parse(text) as SignInRecord;
      const valid =
        raw.id === id &&
        STATES.includes(raw.state) &&
        typeof raw.node_id === 'string' &&
        !Number.isNaN(Date.parse(raw.forget_at)) &&
        typeof raw.prompt === 'object' &&
        raw.prompt !== null;
      if (!valid) return undefined;
      return {
        ...publicSignInStatus(raw),
        node_id: raw.node_id,
        cancel_requested: raw.cancel_requested === true,
        forget_at: raw.forget_at,
      };
    } catch {
      return undefined;
    }
  }
}
