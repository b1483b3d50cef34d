/**
 * @module jsonlAuditStore
 * An `AuditStore` over one JSONL file: one canonical entry per line.
 *
 * Durability: appends are group-committed. Every append queued while a
 * write is in flight joins the next batch, which is one `write` of whole
 * lines followed by one `fdatasync`; an append resolves only after its
 * batch is on disk. A batch never contains a partial line, so a crash can
 * tear at most the last line, which `open` reports and `repairJsonlFile`
 * fixes without dropping a complete entry.
 *
 * Several processes may share a file with `multiProcess: true`: each batch
 * then takes a lock file and re-reads the head under it.
 */

import type { FileHandle } from 'node:fs/promises';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type AuditStore, assertContinues, type ChainHead, type EntryBuilder } from '../core/auditStore.js';
import type { AuditEntry, SealedEntry } from '../core/entry.js';
import { AuditChainError } from '../core/errors.js';
import { acquireFileLock, type ReleaseLock } from './fileLock.js';
import { fileLines } from './lines.js';
import { readTail } from './tail.js';

/** Options of {@link JsonlAuditStore.open}. */
export interface JsonlAuditStoreOptions {
  /** Flush each batch to disk before resolving (default true). Turn off only for throwaway logs. */
  fsync?: boolean;
  /** Share the file with other processes: lock and re-read the head per batch (default false). */
  multiProcess?: boolean;
  /** How long to wait for another process's lock (default 10 s). */
  lockTimeoutMs?: number;
  /**
   * Opens the log for reading and appending, creating it (default `open(path, 'a+', 0o644)`).
   * Pass one that confines the file, for example one that refuses a symlink in its place.
   */
  openFile?: (path: string) => Promise<FileHandle>;
}

interface PendingAppend {
  build: EntryBuilder;
  resolve: (entries: SealedEntry[]) => void;
  reject: (error: unknown) => void;
}

function headFromLine(line: string | undefined, path: string): ChainHead {
  if (line === undefined) return { size: 0, hash: null };
  let entry: { id?: unknown; hash?: unknown };
  try {
    entry = JSON.parse(line);
  } catch (error) {
    throw new AuditChainError('STORE_FAILED', `the last line of ${path} is not JSON; verify the file`, { cause: error });
  }
  if (typeof entry?.id !== 'number' || typeof entry.hash !== 'string') {
    throw new AuditChainError('STORE_FAILED', `the last line of ${path} is not an audit entry; verify the file`);
  }
  return { size: entry.id, hash: entry.hash };
}

/**
 * A durable, append-only audit store in one JSONL file.
 *
 * @example
 * ```ts
 * const store = await JsonlAuditStore.open('audit.jsonl');
 * const log = new AuditLog(store, { origin: 'example.com/app' });
 * await log.append({ actor: 'alice', action: 'deploy' });
 * await store.close();
 * ```
 */
export class JsonlAuditStore implements AuditStore {
  readonly path: string;
  private readonly handle: FileHandle;
  private readonly fsync: boolean;
  private readonly multiProcess: boolean;
  private readonly lockTimeoutMs: number;
  private currentHead: ChainHead;
  private queue: PendingAppend[] = [];
  private flushing: Promise<void> | undefined;
  private failure: unknown;
  private closed = false;

  private constructor(path: string, handle: FileHandle, head: ChainHead, options: JsonlAuditStoreOptions) {
    this.path = path;
    this.handle = handle;
    this.currentHead = head;
    this.fsync = options.fsync ?? true;
    this.multiProcess = options.multiProcess ?? false;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  }

  /**
   * Opens (creating if needed) the log at `path`.
   *
   * @throws {AuditChainError} `TORN_TAIL` when the last line is incomplete;
   * run `repairJsonlFile` (or `audit-chain repair`) first.
   */
  static async open(path: string, options: JsonlAuditStoreOptions = {}): Promise<JsonlAuditStore> {
    await mkdir(dirname(path), { recursive: true });
    const handle = await (options.openFile ?? ((file: string) => open(file, 'a+', 0o644)))(path);
    try {
      const release = options.multiProcess
        ? await acquireFileLock(`${path}.lock`, { timeoutMs: options.lockTimeoutMs ?? 10_000 })
        : undefined;
      try {
        const head = await JsonlAuditStore.readHead(handle, path);
        return new JsonlAuditStore(path, handle, head, options);
      } finally {
        await release?.();
      }
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  private static async readHead(handle: FileHandle, path: string): Promise<ChainHead> {
    const tail = await readTail(handle);
    if (tail.torn.length > 0) {
      throw new AuditChainError(
        'TORN_TAIL',
        `${path} ends with an incomplete line (${Buffer.byteLength(tail.torn)} bytes): run \`audit-chain repair ${path}\``,
      );
    }
    return headFromLine(tail.lastLine, path);
  }

  async head(): Promise<ChainHead> {
    if (!this.multiProcess) return { ...this.currentHead };
    const release = await acquireFileLock(`${this.path}.lock`, { timeoutMs: this.lockTimeoutMs });
    try {
      this.currentHead = await JsonlAuditStore.readHead(this.handle, this.path);
      return { ...this.currentHead };
    } finally {
      await release();
    }
  }

  append(build: EntryBuilder): Promise<SealedEntry[]> {
    if (this.closed) return Promise.reject(new AuditChainError('STORE_FAILED', `${this.path} is closed`));
    if (this.failure !== undefined) {
      return Promise.reject(
        new AuditChainError('STORE_FAILED', `an earlier write to ${this.path} failed; reopen the store`, { cause: this.failure }),
      );
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ build, resolve, reject });
      this.scheduleFlush();
    });
  }

  async *read(range: { fromId?: number; toId?: number } = {}): AsyncIterable<AuditEntry> {
    const from = range.fromId ?? 1;
    const to = range.toId ?? Number.POSITIVE_INFINITY;
    if (!this.multiProcess && from > this.currentHead.size) return;
    let id = 0;
    for await (const event of fileLines(this.path)) {
      if (event.kind !== 'line') break;
      id++;
      if (id < from) continue;
      if (id > to) break;
      yield JSON.parse(event.line) as AuditEntry;
    }
  }

  async *lines(): AsyncIterable<string> {
    for await (const event of fileLines(this.path)) {
      if (event.kind === 'line') yield event.line;
    }
  }

  /** Waits for queued appends, then closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing) await this.flushing;
    await this.handle.close();
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = undefined;
      // Appends that arrived after the loop's last check would otherwise wait forever.
      if (this.queue.length > 0) this.scheduleFlush();
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      await this.writeBatch(batch);
    }
  }

  private async writeBatch(batch: PendingAppend[]): Promise<void> {
    if (this.failure !== undefined) {
      for (const item of batch)
        item.reject(new AuditChainError('STORE_FAILED', `an earlier write to ${this.path} failed`, { cause: this.failure }));
      return;
    }
    let release: ReleaseLock | undefined;
    let writeStarted = false;
    const accepted: { item: PendingAppend; sealed: SealedEntry[] }[] = [];
    try {
      if (this.multiProcess) {
        release = await acquireFileLock(`${this.path}.lock`, { timeoutMs: this.lockTimeoutMs });
        this.currentHead = await JsonlAuditStore.readHead(this.handle, this.path);
      }
      let head = this.currentHead;
      let text = '';
      for (const item of batch) {
        let sealed: SealedEntry[];
        try {
          sealed = item.build(head);
          assertContinues(head, sealed);
        } catch (error) {
          item.reject(error);
          continue;
        }
        for (const s of sealed) text += `${s.line}\n`;
        const last = sealed[sealed.length - 1];
        if (last) head = { size: last.entry.id, hash: last.entry.hash };
        accepted.push({ item, sealed });
      }
      if (text.length > 0) {
        writeStarted = true;
        await this.writeAll(Buffer.from(text, 'utf8'));
        if (this.fsync) await this.handle.datasync();
      }
      this.currentHead = head;
      for (const { item, sealed } of accepted) item.resolve(sealed);
    } catch (error) {
      // Once a write has started, what reached the disk is unknown: refuse further appends until reopened.
      if (writeStarted) this.failure = error;
      // Settled promises ignore a second settlement, so rejecting the whole batch is safe.
      for (const item of batch) item.reject(error);
    } finally {
      await release?.();
    }
  }

  private async writeAll(buffer: Buffer): Promise<void> {
    let offset = 0;
    while (offset < buffer.length) {
      const { bytesWritten } = await this.handle.write(buffer, offset, buffer.length - offset);
      offset += bytesWritten;
    }
  }
}
