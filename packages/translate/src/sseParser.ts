/**
 * @module sseParser
 * An incremental server-sent events parser (the WHATWG rules: `event:`,
 * `data:` lines joined with newlines, comments ignored, LF, CRLF or CR line
 * ends) that takes bytes as they arrive, in chunks split anywhere, even
 * inside a UTF-8 character, and yields whole events only.
 */

/** One parsed event. `event` is null when the stream gave no name. */
export interface SseEvent {
  event: string | null;
  data: string;
}

/**
 * The most of one event a stream parser holds while waiting for its end (32 MiB, as much as the
 * relay reads of a whole answer). An upstream that never ends its event (an endless line, a
 * blank line that never comes) fails its stream here instead of filling the gateway's memory.
 */
export const MAX_SSE_EVENT_BYTES = 32 * 1024 * 1024;

/** The error a stream fails with when one event outgrows its limit (`code` `SSE_EVENT_TOO_LARGE`). */
export function sseEventTooLarge(limit: number): Error {
  return Object.assign(new Error(`an upstream event exceeds ${limit} bytes without ending`), { code: 'SSE_EVENT_TOO_LARGE' });
}

/** Options of {@link SseParser}. */
export interface SseParserOptions {
  /** The most characters of one unfinished event held back before `push` throws (default {@link MAX_SSE_EVENT_BYTES}). */
  maxEventLength?: number;
}

/**
 * Parses a byte stream into events.
 *
 * @example
 * ```ts
 * const parser = new SseParser();
 * for (const event of parser.push(chunk)) console.log(event.event, JSON.parse(event.data));
 * ```
 */
export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly maxEventLength: number;
  private buffer = '';
  private eventName: string | null = null;
  private data: string[] = [];
  /** Characters in `data`, kept as they are added: `pending` is checked on every push. */
  private dataLength = 0;
  private sawData = false;
  /** The held text ends with a CR that may be half of a CRLF. */
  private heldCr = false;

  constructor(options: SseParserOptions = {}) {
    this.maxEventLength = options.maxEventLength ?? MAX_SSE_EVENT_BYTES;
  }

  /** Feeds a chunk; returns the events it completed. Throws (`SSE_EVENT_TOO_LARGE`) when an unfinished event outgrows the limit. */
  push(chunk: Uint8Array | string): SseEvent[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    // No line ends in this piece (one event in many small chunks): append, and leave the held text
    // unscanned, so an event costs its length once, not once per chunk.
    const noLineEnd = !this.heldCr && text.indexOf('\n') < 0 && text.indexOf('\r') < 0;
    this.buffer += text;
    const events = noLineEnd ? [] : this.drain(false);
    if (this.pending > this.maxEventLength) throw sseEventTooLarge(this.maxEventLength);
    return events;
  }

  /** Ends the stream; an event missing its blank line is discarded, as the spec says. */
  end(): SseEvent[] {
    this.buffer += this.decoder.decode();
    return this.drain(true);
  }

  /** Characters held back (an incomplete line or event). */
  get pending(): number {
    return this.buffer.length + this.dataLength;
  }

  private drain(final: boolean): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    const text = this.buffer;
    this.heldCr = false;
    // A text without CR (the usual one) is searched for it once, not once per line.
    let cr = text.indexOf('\r');
    for (;;) {
      const lf = text.indexOf('\n', start);
      if (cr >= 0 && cr < start) cr = text.indexOf('\r', start);
      let end: number;
      let next: number;
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        // A CR at the very end may be the first half of CRLF: wait for more.
        if (cr === text.length - 1 && !final) {
          this.heldCr = true;
          break;
        }
        end = cr;
        next = text[cr + 1] === '\n' ? cr + 2 : cr + 1;
      } else if (lf >= 0) {
        end = lf;
        next = lf + 1;
      } else break;
      this.line(text.slice(start, end), out);
      start = next;
    }
    this.buffer = text.slice(start);
    if (final) {
      this.buffer = '';
      this.reset();
    }
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.sawData) out.push({ event: this.eventName, data: this.data.join('\n') });
      this.reset();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.dataLength += value.length;
      this.sawData = true;
    } else if (field === 'event') this.eventName = value;
  }

  private reset(): void {
    this.eventName = null;
    this.data = [];
    this.dataLength = 0;
    this.sawData = false;
  }
}

/** Formats one event; `data` is written on one line (JSON never needs more). */
export function sseEvent(data: unknown, event?: string): string {
  const json = typeof data === 'string' ? data : JSON.stringify(data);
  return event ? `event: ${event}\ndata: ${json}\n\n` : `data: ${json}\n\n`;
}
