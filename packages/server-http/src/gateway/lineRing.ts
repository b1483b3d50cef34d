/**
 * @module lineRing
 * The last lines of the log, kept as UTF-8 bytes in one preallocated buffer.
 *
 * Why bytes and not the strings: the log tail holds the last 5,000 lines,
 * and a string kept that long is copied out of V8's young generation and
 * promoted, then marked by every major GC while it lives. At one request
 * line per request that cost about 2.5 µs a request (2026-11-28, the relay
 * benchmark's default config). Copied into a buffer, each line's string dies
 * young, and the buffer is one object however many lines it holds. Reading
 * (`GET /v0/management/logs`, rare) decodes the lines asked for.
 */

/** Lines by count and by bytes, oldest dropped first. */
export class LineRing {
  private readonly bytes: Buffer;
  /** Byte offset and length of each line, in a ring of `maxLines` slots. */
  private readonly starts: Int32Array;
  private readonly lengths: Int32Array;
  /** Slot of the oldest line, and lines held. */
  private first = 0;
  private count = 0;
  /** Where the next line's bytes go. */
  private writeAt = 0;

  constructor(
    private readonly maxLines: number,
    maxBytes = maxLines * 512,
  ) {
    this.bytes = Buffer.allocUnsafe(maxBytes);
    this.starts = new Int32Array(maxLines);
    this.lengths = new Int32Array(maxLines);
  }

  get size(): number {
    return this.count;
  }

  /** Keeps `line` (a line longer than a third of the buffer keeps its beginning). */
  push(line: string): void {
    const capacity = this.bytes.length;
    // A character takes at most 3 bytes in UTF-8 (a surrogate pair, 2 characters, takes 4).
    const text = line.length * 3 + 1 > capacity ? line.slice(0, Math.floor((capacity - 1) / 3)) : line;
    // Each line takes one byte more than its text, so that no two lines start at the same offset (an empty
    // line would otherwise share its offset with the next, and be taken for an overwritten one).
    if (this.writeAt + text.length * 3 + 1 > capacity) {
      // Not enough room before the end for the longest encoding: start again at 0. The lines between
      // here and the end are the oldest ones; they go first.
      const wrapFrom = this.writeAt;
      while (this.count > 0 && this.starts[this.first]! >= wrapFrom) this.dropOldest();
      this.writeAt = 0;
    }
    const start = this.writeAt;
    const written = this.bytes.write(text, start, 'utf8');
    // Lines of the last pass whose bytes were just overwritten go (they start at or after `start`).
    while (this.count > 0 && this.starts[this.first]! >= start && this.starts[this.first]! <= start + written) this.dropOldest();
    if (this.count === this.maxLines) this.dropOldest();
    const slot = (this.first + this.count) % this.maxLines;
    this.starts[slot] = start;
    this.lengths[slot] = written;
    this.count++;
    this.writeAt = start + written + 1;
  }

  /** The last `n` lines, oldest first. */
  last(n: number): string[] {
    const take = Math.min(n, this.count);
    const lines: string[] = [];
    for (let i = this.count - take; i < this.count; i++) {
      const slot = (this.first + i) % this.maxLines;
      const start = this.starts[slot]!;
      lines.push(this.bytes.toString('utf8', start, start + this.lengths[slot]!));
    }
    return lines;
  }

  private dropOldest(): void {
    this.first = (this.first + 1) % this.maxLines;
    this.count--;
  }
}
