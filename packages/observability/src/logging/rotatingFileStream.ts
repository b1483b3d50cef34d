/**
 * @module rotatingFileStream
 * A log file that rotates by size and prunes by count and age, the way
 * operators know from logrotate and lumberjack: when the next line would
 * take the file past `maxSize`, the file is renamed to
 * `<name>-<UTC time><ext>` and a fresh one is opened; then backups past
 * `maxBackups` (newest kept) or older than `maxAge` are deleted.
 *
 * Lines are buffered and written with one `write` per batch (at 64 KiB or on
 * the next turn of the event loop), so logging costs a string push per line
 * on the request path. `sync: true` writes each line at once.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { type Clock, systemClock } from '@switchyard/runtime';
import { ObservabilityError } from '../errors.js';

/** Options of {@link RotatingFileStream}. */
export interface RotatingFileStreamOptions {
  path: string;
  /** Rotate before the file grows past this many bytes; 0 never rotates. */
  maxSize: number;
  /** Delete backups older than this (ms); 0 keeps them regardless of age. */
  maxAgeMs?: number;
  /** Backups kept (newest first); 0 keeps them regardless of count. */
  maxBackups?: number;
  /** Names backups and judges their age. */
  clock?: Clock;
  /** Write every line at once instead of batching. */
  sync?: boolean;
  /** File mode of new log files (default 0o640). */
  mode?: number;
}

const FLUSH_AT_BYTES = 64 * 1024;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A pino destination writing to a rotated file.
 *
 * @example
 * ```ts
 * const file = new RotatingFileStream({ path: './logs/gw.log', maxSize: 100 * 1024 ** 2, maxBackups: 10, maxAgeMs: 30 * 86_400_000 });
 * const logger = pino(loggerOptions(), file);
 * ```
 */
export class RotatingFileStream {
  readonly path: string;
  private readonly dir: string;
  private readonly stem: string;
  private readonly ext: string;
  private readonly backupPattern: RegExp;
  private readonly maxSize: number;
  private readonly maxAgeMs: number;
  private readonly maxBackups: number;
  private readonly clock: Clock;
  private readonly sync: boolean;
  private readonly mode: number;
  private fd: number;
  private size: number;
  private pending: string[] = [];
  private pendingBytes = 0;
  private flushScheduled = false;
  private closed = false;
  private readonly onExit = () => this.flushSync();
  /** Bytes that could not be written (disk full, say); logging never throws into the caller. */
  droppedBytes = 0;
  /** The last write error, if any. */
  lastError: Error | undefined;

  constructor(options: RotatingFileStreamOptions) {
    if (!(options.maxSize >= 0)) throw new ObservabilityError('invalid_argument', 'maxSize must be ≥ 0');
    this.path = options.path;
    this.dir = dirname(options.path);
    this.ext = extname(options.path);
    this.stem = basename(options.path, this.ext);
    this.backupPattern = new RegExp(
      `^${escapeRegExp(this.stem)}-(\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}\\.\\d{3}Z)(?:-(\\d+))?${escapeRegExp(this.ext)}$`,
    );
    this.maxSize = options.maxSize;
    this.maxAgeMs = options.maxAgeMs ?? 0;
    this.maxBackups = options.maxBackups ?? 0;
    this.clock = options.clock ?? systemClock;
    this.sync = options.sync ?? false;
    this.mode = options.mode ?? 0o640;
    mkdirSync(this.dir, { recursive: true });
    this.fd = openSync(this.path, 'a', this.mode);
    this.size = fstatSync(this.fd).size;
    process.on('exit', this.onExit);
    this.prune();
  }

  /** Appends one chunk (pino passes one line). Never throws. */
  write(chunk: string): boolean {
    if (this.closed) return false;
    const bytes = Buffer.byteLength(chunk);
    const used = this.size + this.pendingBytes;
    if (this.maxSize > 0 && used > 0 && used + bytes > this.maxSize) this.rotate();
    this.pending.push(chunk);
    this.pendingBytes += bytes;
    if (this.sync || this.pendingBytes >= FLUSH_AT_BYTES) this.flushSync();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.flushSync();
      });
    }
    return true;
  }

  /** Writes buffered lines now. */
  flushSync(): void {
    if (this.pendingBytes === 0 || this.closed) return;
    const data = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    const bytes = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    try {
      writeSync(this.fd, data);
      this.size += bytes;
    } catch (error) {
      this.droppedBytes += bytes;
      this.lastError = error as Error;
    }
  }

  /** pino's `logger.flush(cb)` calls this. */
  flush(callback?: (error?: Error) => void): void {
    this.flushSync();
    callback?.();
  }

  /** Rotates now (a SIGHUP handler may call this), whatever the size. */
  rotate(): void {
    this.flushSync();
    if (this.size === 0) return;
    try {
      closeSync(this.fd);
      renameSync(this.path, this.backupPath());
    } catch (error) {
      this.lastError = error as Error;
    }
    this.fd = openSync(this.path, 'a', this.mode);
    this.size = fstatSync(this.fd).size;
    this.prune();
  }

  /** Backups, newest first (full paths). */
  backups(): string[] {
    return this.listBackups().map((b) => b.path);
  }

  /** Flushes and closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flushSync();
    this.closed = true;
    process.off('exit', this.onExit);
    closeSync(this.fd);
  }

  /** pino calls `end` on shutdown paths. */
  end(): void {
    void this.close();
  }

  private backupPath(): string {
    const stamp = new Date(this.clock.now()).toISOString().replace(/:/g, '-');
    let candidate = join(this.dir, `${this.stem}-${stamp}${this.ext}`);
    for (let n = 1; exists(candidate); n++) candidate = join(this.dir, `${this.stem}-${stamp}-${n}${this.ext}`);
    return candidate;
  }

  private listBackups(): { path: string; at: number; seq: number }[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const found: { path: string; at: number; seq: number }[] = [];
    for (const name of names) {
      const match = this.backupPattern.exec(name);
      if (!match) continue;
      const iso = match[1]!.replace(/T(\d{2})-(\d{2})-(\d{2})/, 'T$1:$2:$3');
      found.push({ path: join(this.dir, name), at: Date.parse(iso), seq: Number(match[2] ?? 0) });
    }
    return found.sort((a, b) => b.at - a.at || b.seq - a.seq);
  }

  private prune(): void {
    const now = this.clock.now();
    this.listBackups().forEach((backup, index) => {
      const tooMany = this.maxBackups > 0 && index >= this.maxBackups;
      const tooOld = this.maxAgeMs > 0 && now - backup.at > this.maxAgeMs;
      if (!tooMany && !tooOld) return;
      try {
        unlinkSync(backup.path);
      } catch (error) {
        this.lastError = error as Error;
      }
    });
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
