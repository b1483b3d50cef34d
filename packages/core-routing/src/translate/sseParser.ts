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
  private buffer = '';
  private eventName: string | null = null;
  private data: string[] = [];
  private sawData = false;

  /** Feeds a chunk; returns the events it completed. */
  push(chunk: Uint8Array | string): SseEvent[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    return this.drain(false);
  }

  /** Ends the stream; an event missing its blank line is discarded, as the spec says. */
  end(): SseEvent[] {
    this.buffer += this.decoder.decode();
    return this.drain(true);
  }

  /** Characters held back (an incomplete line or event). */
  get pending(): number {
    return this.buffer.length + this.data.reduce((n, d) => n + d.length, 0);
  }

  private drain(final: boolean): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    const text = this.buffer;
    for (;;) {
      const lf = text.indexOf('\n', start);
      const cr = text.indexOf('\r', start);
      let end: number;
      let next: number;
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        // A CR at the very end may be the first half of CRLF: wait for more.
        if (cr === text.length - 1 && !final) break;
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
      this.sawData = true;
    } else if (field === 'event') this.eventName = value;
  }

  private reset(): void {
    this.eventName = null;
    this.data = [];
    this.sawData = false;
  }
}

/** Formats one event; `data` is written on one line (JSON never needs more). */
export function sseEvent(data: unknown, event?: string): string {
  const json = typeof data === 'string' ? data : JSON.stringify(data);
  return event ? `event: ${event}\ndata: ${json}\n\n` : `data: ${json}\n\n`;
}
