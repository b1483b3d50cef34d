/**
 * @module jsonlLines
 * Splits a JSONL byte stream into lines without buffering the whole stream,
 * and reports separately what is not a line of the format: bytes after the
 * last newline (a torn tail) and a line whose bytes are not UTF-8.
 *
 * Lines are split on the byte 0x0A before decoding, and each run of complete
 * lines is decoded strictly. A lenient decoder would turn an invalid byte
 * into U+FFFD and drop a leading BOM, so a log whose bytes were altered that
 * way would still verify; the stored form (SPEC.md section 3) is UTF-8 with
 * no BOM, so such a line is reported instead. Runs on any runtime with
 * `TextDecoder` (no `node:` imports: the `/web` entry uses it too).
 */

/** One piece of a JSONL stream, for readers (a line that is not UTF-8 comes decoded leniently). */
export type LineEvent = { kind: 'line'; line: string } | { kind: 'torn'; text: string; byteLength: number };

/**
 * The complete lines of one chunk, the torn tail at the end, or a complete
 * line that is not UTF-8 (`line` is its lenient decoding, for readers that
 * only display it).
 */
export type LineBatch =
  | { kind: 'lines'; lines: string[] }
  | { kind: 'torn'; text: string; byteLength: number }
  | { kind: 'undecodable'; line: string };

const NEWLINE = 0x0a;

/**
 * Yields the newline-terminated lines of `chunks` a chunk at a time (one
 * await per chunk, not per line), then, if bytes follow the last newline,
 * one `torn` batch with them. A complete line that is not UTF-8 (a BOM
 * included) comes as its own `undecodable` batch, in order.
 */
export async function* splitLineBatches(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<LineBatch> {
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const encoder = new TextEncoder();
  // Bytes of the line in progress. Copied: a caller may reuse its chunk buffer.
  let carry: Uint8Array[] = [];
  let carryBytes = 0;
  for await (const chunk of chunks) {
    const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
    const last = bytes.lastIndexOf(NEWLINE);
    if (last < 0) {
      if (bytes.length > 0) {
        carry.push(copy(bytes));
        carryBytes += bytes.length;
      }
      continue;
    }
    const out: LineBatch[] = [];
    let start = 0;
    if (carryBytes > 0) {
      const first = bytes.indexOf(NEWLINE);
      carry.push(bytes.subarray(0, first));
      decodeLines(strict, concat(carry, carryBytes + first), out);
      carry = [];
      carryBytes = 0;
      start = first + 1;
    }
    if (start <= last) decodeLines(strict, bytes.subarray(start, last), out);
    if (last + 1 < bytes.length) {
      carry.push(copy(bytes.subarray(last + 1)));
      carryBytes = bytes.length - last - 1;
    }
    yield* out;
  }
  if (carryBytes > 0) {
    yield { kind: 'torn', text: new TextDecoder().decode(concat(carry, carryBytes)), byteLength: carryBytes };
  }
}

/**
 * Line-at-a-time form of {@link splitLineBatches} for readers, not
 * verifiers: a line that is not UTF-8 comes as a line, decoded leniently.
 */
export async function* splitLines(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<LineEvent> {
  for await (const batch of splitLineBatches(chunks)) {
    if (batch.kind === 'lines') for (const line of batch.lines) yield { kind: 'line', line };
    else if (batch.kind === 'undecodable') yield { kind: 'line', line: batch.line };
    else yield batch;
  }
}

/** Decodes `bytes` (complete lines joined by LF, without the last LF) into `out`, merging into its last `lines` batch. */
function decodeLines(strict: { decode(input: Uint8Array): string }, bytes: Uint8Array, out: LineBatch[]): void {
  let text: string | undefined;
  try {
    text = strict.decode(bytes);
  } catch {
    text = undefined;
  }
  if (text !== undefined) {
    pushLines(out, text.split('\n'));
    return;
  }
  // Some line is not UTF-8: find which, line by line (a slow path a valid log never takes).
  const lenient = new TextDecoder('utf-8', { ignoreBOM: true });
  let start = 0;
  for (;;) {
    const newline = bytes.indexOf(NEWLINE, start);
    const line = bytes.subarray(start, newline < 0 ? bytes.length : newline);
    try {
      pushLines(out, [strict.decode(line)]);
    } catch {
      out.push({ kind: 'undecodable', line: lenient.decode(line) });
    }
    if (newline < 0) return;
    start = newline + 1;
  }
}

function pushLines(out: LineBatch[], lines: string[]): void {
  const previous = out[out.length - 1];
  if (previous?.kind !== 'lines') out.push({ kind: 'lines', lines });
  else for (const line of lines) previous.lines.push(line);
}

/** A copy of `bytes` (a Node Buffer's `slice` would share its memory). */
function copy(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const joined = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}
