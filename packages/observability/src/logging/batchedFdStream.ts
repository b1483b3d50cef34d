/**
 * @module batchedFdStream
 * The log destination for stdout and stderr: lines are gathered in an array
 * and written together, joined once per batch, by an asynchronous
 * `fs.write` that never blocks the event loop on a slow reader.
 *
 * Why not pino's own destination (sonic-boom): it appends each line to the
 * batch string and measures the UTF-8 length of the whole batch on every
 * write, which flattens the growing string each time. At the request log's
 * one line per request that cost 4.6–6 µs a line against 0.7 µs here
 * (2026-11-28, `bench/relay`'s default config, lines of 300 bytes to
 * /dev/null, CPU time per line).
 *
 * What sonic-boom handled is handled here too: short writes (the rest is
 * written next), `EAGAIN` on a non-blocking pipe (retried after a pause),
 * a reader that went away (`EPIPE`: lines are dropped and counted, the
 * gateway keeps serving), a bound on what waits in memory while the reader
 * stalls (past it new lines are dropped and counted), and the process's
 * exit (what is gathered is written synchronously, so nothing logged before
 * `process.exit()` is lost).
 *
 * A regular file or a character device that is not a terminal (`/dev/null`,
 * say) is written synchronously, a batch at a time: such a write never waits
 * on a reader, and an asynchronous one still in progress when the process
 * exits can be neither confirmed nor cancelled, so the exit flush had to
 * write it again (the batch then appeared twice in the file). Pipes,
 * sockets and terminals, which may block, keep the asynchronous writes.
 */
import { fstatSync, write as fsWrite, writeSync as fsWriteSync } from 'node:fs';
import { isatty } from 'node:tty';

/** The two calls the stream makes, replaceable in tests (a short write, `EAGAIN`). */
export interface FdWriter {
  write(fd: number, buffer: Buffer, callback: (error: NodeJS.ErrnoException | null, written: number) => void): void;
  writeSync(fd: number, buffer: Buffer): number;
}

const nodeWriter: FdWriter = {
  write: (fd, buffer, callback) => fsWrite(fd, buffer, 0, buffer.length, null, callback),
  writeSync: (fd, buffer) => fsWriteSync(fd, buffer),
};

/** Options of {@link BatchedFdStream}. */
export interface BatchedFdStreamOptions {
  fd: number;
  /** Characters gathered before a write starts (default 16 KiB). */
  batchChars?: number;
  /** The longest a gathered line waits for its write, in ms (default 100). */
  flushMs?: number;
  /** Characters that may wait while the reader stalls; past it new lines are dropped (default 16 MiB). */
  maxPendingChars?: number;
  /** Pause before retrying a write that met `EAGAIN`, in ms (default 10). */
  retryMs?: number;
  /**
   * Write each batch with a blocking write (default: when `fd` is a regular file or a character device that
   * is not a terminal, which never wait on a reader; see the module's note).
   */
  synchronous?: boolean;
  writer?: FdWriter;
}

/** Whether writes to `fd` can never wait on a reader: a regular file, or a character device that is not a terminal. */
export function writesWithoutWaiting(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isFile() || (stat.isCharacterDevice() && !isatty(fd));
  } catch {
    return false;
  }
}

/** Blocks a millisecond between synchronous retries at exit (a full non-blocking pipe). */
const pause = new Int32Array(new SharedArrayBuffer(4));

/** Streams with lines to write when the process exits, held weakly (a test may open thousands). */
const open = new Set<WeakRef<BatchedFdStream>>();
const forget = new FinalizationRegistry<WeakRef<BatchedFdStream>>((ref) => open.delete(ref));
let exitHookInstalled = false;

function register(stream: BatchedFdStream): WeakRef<BatchedFdStream> {
  const ref = new WeakRef(stream);
  open.add(ref);
  forget.register(stream, ref);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const each of open) each.deref()?.flushSync();
    });
  }
  return ref;
}

/** A pino destination writing to a file descriptor in batches. */
export class BatchedFdStream {
  /** Lines dropped: the reader went away, or stalled past `maxPendingChars`. */
  dropped = 0;
  private readonly fd: number;
  private readonly batchChars: number;
  private readonly flushMs: number;
  private readonly maxPendingChars: number;
  private readonly retryMs: number;
  private readonly synchronous: boolean;
  private readonly writer: FdWriter;
  private pending: string[] = [];
  private pendingChars = 0;
  /** The bytes of the write in progress not yet confirmed written, and how many lines they hold. */
  private inFlight: Buffer | undefined;
  private inFlightLines = 0;
  private readonly ref: WeakRef<BatchedFdStream>;
  private timer: NodeJS.Timeout | undefined;
  private broken = false;
  private flushWaiters: (() => void)[] = [];

  constructor(options: BatchedFdStreamOptions) {
    this.fd = options.fd;
    this.batchChars = options.batchChars ?? 16 * 1024;
    this.flushMs = options.flushMs ?? 100;
    this.maxPendingChars = options.maxPendingChars ?? 16 * 1024 * 1024;
    this.retryMs = options.retryMs ?? 10;
    this.writer = options.writer ?? nodeWriter;
    this.synchronous = options.synchronous ?? writesWithoutWaiting(this.fd);
    this.ref = register(this);
  }

  /** Gathers one line (pino hands over whole lines). */
  write(line: string): boolean {
    if (this.broken || this.pendingChars + line.length > this.maxPendingChars) {
      this.dropped++;
      return false;
    }
    this.pending.push(line);
    this.pendingChars += line.length;
    if (this.inFlight === undefined) {
      if (this.pendingChars >= this.batchChars) this.startWrite();
      else if (this.timer === undefined) this.timer = setTimeout(() => this.onTimer(), this.flushMs).unref();
    }
    return true;
  }

  /** Writes everything gathered; `callback` runs once it is written (or dropped, if the reader is gone). */
  flush(callback?: (error?: Error) => void): void {
    if (callback) this.flushWaiters.push(() => callback());
    if (this.inFlight === undefined) {
      if (this.pending.length > 0) this.startWrite();
      else this.settleWaiters();
    }
  }

  /** Writes the write in progress and everything gathered now, blocking (at exit). */
  flushSync(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    // An asynchronous write (to a pipe or a terminal) still in progress when the process exits may or may not
    // have landed: written again, a few lines may appear twice, which beats losing them.
    const rest = this.inFlight === undefined ? this.takePending() : Buffer.concat([this.inFlight, this.takePending()]);
    this.inFlight = undefined;
    this.writeBlocking(rest, 0);
  }

  /** Writes `buffer` with blocking writes; a write that fails for good breaks the stream, its `lines` dropped. */
  private writeBlocking(buffer: Buffer, lines: number): void {
    let offset = 0;
    while (!this.broken && offset < buffer.length) {
      try {
        offset += this.writer.writeSync(this.fd, buffer.subarray(offset));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') Atomics.wait(pause, 0, 0, 1);
        else {
          this.broken = true;
          this.dropped += lines;
        }
      }
    }
  }

  /** Flushes and stops: later lines are dropped (and counted). */
  end(): void {
    this.flushSync();
    this.broken = true;
    open.delete(this.ref);
  }

  private onTimer(): void {
    this.timer = undefined;
    if (this.inFlight === undefined && this.pending.length > 0) this.startWrite();
  }

  private takePending(): Buffer {
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    return Buffer.from(text, 'utf8');
  }

  private startWrite(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlightLines = this.pending.length;
    if (this.synchronous) {
      this.writeBlocking(this.takePending(), this.inFlightLines);
      this.settleWaiters();
      return;
    }
    this.send(this.takePending());
  }

  private send(buffer: Buffer): void {
    this.inFlight = buffer;
    this.writer.write(this.fd, buffer, (error, written) => this.onWritten(buffer, error, written));
  }

  private onWritten(buffer: Buffer, error: NodeJS.ErrnoException | null, written: number): void {
    if (this.inFlight !== buffer) return; // flushSync took over at exit
    if (error) {
      if (error.code === 'EAGAIN') {
        // Not unref()ed: a flush() awaited at shutdown must not be left hanging by an idle event loop.
        setTimeout(() => this.send(buffer), this.retryMs);
        return;
      }
      // The reader is gone (EPIPE, EBADF): nothing will read these lines, and the gateway goes on serving.
      this.broken = true;
      this.dropped += this.pending.length + this.inFlightLines;
      this.pending = [];
      this.pendingChars = 0;
      this.inFlight = undefined;
      this.settleWaiters();
      return;
    }
    if (written < buffer.length) {
      this.send(buffer.subarray(written));
      return;
    }
    this.inFlight = undefined;
    if (this.pending.length === 0) this.settleWaiters();
    else if (this.pendingChars >= this.batchChars || this.flushWaiters.length > 0) this.startWrite();
    else if (this.timer === undefined) this.timer = setTimeout(() => this.onTimer(), this.flushMs).unref();
  }

  private settleWaiters(): void {
    for (const waiter of this.flushWaiters.splice(0)) waiter();
  }
}
