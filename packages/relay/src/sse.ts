/**
 * @module sse
 * Passes an OpenAI-style server-sent event stream through, event by event.
 * Only whole events are forwarded, so if the upstream dies mid-event the
 * client never sees half of one and can be sent a clean error event
 * instead. Along the way it picks out the token usage (the chunk OpenAI
 * sends when `stream_options.include_usage` is set) and, when the client
 * did not ask for usage, drops that chunk so the stream looks as if the
 * relay had not asked either.
 */
import { MAX_SSE_EVENT_BYTES, sseEventTooLarge } from '@switchyard/translate';
import type { Usage } from './types.js';

const DONE = Buffer.from('data: [DONE]');
const USAGE = Buffer.from('"usage"');
const FINISH = Buffer.from('"finish_reason":"');
const LF_LF = Buffer.from('\n\n');
const LF_CR = Buffer.from('\n\r');
const CR_CR = Buffer.from('\r\r');

const EMPTY = Buffer.alloc(0);
const LF = 0x0a;
const CR = 0x0d;

/*
 * Line endings are CRLF, LF or a lone CR (the SSE spec allows all three, even mixed), and an event
 * ends at a blank line: a line ending right after another. A CR followed by LF is one ending, so
 * the blank lines are exactly the byte pairs LF LF, LF CR and CR CR (whatever precedes them: an LF
 * always ends a line, and a CR always starts an ending), plus the LF that completes a CRLF when one
 * follows the pair's CR. A chunk ending in such a CR ends an event there: its LF, if one comes
 * next, starts the next run of bytes as the rest of that ending (an empty line to a parser).
 */

/** End of the blank line whose pair starts at `i` (just after it, its CRLF's LF included), or -1. */
function blankLineEnd(data: Buffer, i: number): number {
  const first = data[i];
  const second = data[i + 1];
  if (first === LF) {
    if (second === LF) return i + 2;
    if (second !== CR) return -1;
  } else if (first !== CR || second !== CR) return -1;
  return data[i + 2] === LF ? i + 3 : i + 2;
}

/** {@link blankLineEnd} of a pair found by a search (-1 when none was). */
const pairEnd = (data: Buffer, at: number): number => (at < 0 ? -1 : blankLineEnd(data, at));

/** End of the last complete event in `data` (index just after its blank line), or -1. */
export function lastEventEnd(data: Buffer): number {
  const n = data.length;
  if (n < 2) return -1;
  // The usual chunk ends exactly at an event's end: look there before searching the whole chunk.
  const last = data[n - 1];
  const beforeLast = data[n - 2];
  if (last === LF && (beforeLast === LF || (beforeLast === CR && n >= 3 && data[n - 3] === LF))) return n;
  if (last === CR && (beforeLast === LF || beforeLast === CR)) return n;
  const lf = data.lastIndexOf(LF_LF);
  let end = lf < 0 ? -1 : lf + 2;
  // The pairs with a CR end at or before the last CR: an LF-only stream is searched once more, for the CR it lacks.
  const lastCr = data.lastIndexOf(CR);
  if (lastCr >= 1)
    end = Math.max(end, pairEnd(data, data.lastIndexOf(LF_CR, lastCr - 1)), pairEnd(data, data.lastIndexOf(CR_CR, lastCr - 1)));
  return end;
}

/**
 * Cuts a byte stream into runs of whole events: each push returns the bytes up to the end of the
 * last event it completed (possibly none) and holds the rest. Held bytes stay a list of pieces,
 * joined once when their event ends, so an event split into many small chunks costs its size and
 * not its size squared; an event that outgrows `maxEventBytes` without ending fails the stream
 * (`SSE_EVENT_TOO_LARGE`) rather than filling memory.
 *
 * @example
 * ```ts
 * const splitter = new SseEventSplitter();
 * for await (const chunk of upstream) client.write(splitter.push(chunk));
 * ```
 */
export class SseEventSplitter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The last byte held (a blank line can start in it and end in the next chunk). */
  private last = 0;
  /** The bytes returned last ended in a CR: an LF opening the next chunk completes their CRLF. */
  private endedInCr = false;

  constructor(private readonly maxEventBytes = MAX_SSE_EVENT_BYTES) {}

  /** Takes a chunk; returns the bytes of the events it completes, empty when it completes none. */
  push(chunk: Buffer): Buffer {
    if (chunk.length === 0) return EMPTY;
    let end = lastEventEnd(chunk);
    if (this.heldBytes === 0) {
      const n = chunk.length;
      if (end === n) {
        this.endedInCr = chunk[n - 1] === CR;
        return chunk;
      }
      // The LF of the CRLF that ended the last event goes with it, at once, not with the next event.
      if (this.endedInCr && chunk[0] === LF && end < 1) end = 1;
      this.endedInCr = false;
      if (end === n) return chunk;
      // Copies of what is held: the chunk may be the upstream's buffer, which undici can reuse.
      this.hold(Buffer.from(end < 0 ? chunk : chunk.subarray(end)));
      return end < 0 ? EMPTY : chunk.subarray(0, end);
    }
    if (end < 0) end = this.endAcrossSeam(chunk);
    if (end < 0) {
      this.hold(Buffer.from(chunk));
      return EMPTY;
    }
    this.held.push(chunk.subarray(0, end));
    const complete = Buffer.concat(this.held);
    this.held = [];
    this.heldBytes = 0;
    this.last = 0;
    this.endedInCr = end === chunk.length && chunk[end - 1] === CR;
    if (end < chunk.length) this.hold(Buffer.from(chunk.subarray(end)));
    return complete;
  }

  /** Bytes of an unfinished event held back. */
  get pendingBytes(): number {
    return this.heldBytes;
  }

  private hold(bytes: Buffer): void {
    this.heldBytes += bytes.length;
    if (this.heldBytes > this.maxEventBytes) throw sseEventTooLarge(this.maxEventBytes);
    this.held.push(bytes);
    this.last = bytes[bytes.length - 1]!;
  }

  /**
   * End of a blank line that starts in the held bytes and ends in `chunk`, or -1. The held bytes
   * end in at most one line ending (a blank line in them would have ended an event); when that is
   * a CR, an LF opening the chunk completes it as CRLF and the blank line may come after it.
   */
  private endAcrossSeam(chunk: Buffer): number {
    const first = chunk[0];
    if (this.last === LF && first === LF) return 1;
    if (this.last === LF && first === CR) return chunk[1] === LF ? 2 : 1;
    if (this.last !== CR) return -1;
    if (first === CR) return chunk[1] === LF ? 2 : 1;
    if (first !== LF) return -1;
    const second = chunk[1];
    if (second === LF) return 2;
    if (second === CR) return chunk[2] === LF ? 3 : 2;
    return -1;
  }
}

/** Options of {@link OpenAiStreamTap}. */
export interface StreamTapOptions {
  /** Remove usage-only chunks (`choices: []`) before forwarding. */
  stripUsageOnlyChunks: boolean;
  /** Extracts usage from one event's parsed data. */
  usageOf: (json: unknown) => Usage | undefined;
}

/**
 * Splits a byte stream into whole events, forwarding them and noting usage,
 * completion (`finish_reason`) and the `[DONE]` terminator.
 */
export class OpenAiStreamTap {
  private readonly events = new SseEventSplitter();
  private readonly options: StreamTapOptions;
  /** Usage reported by the stream, if any. */
  usage: Usage | undefined;
  /** Whether a choice finished (`finish_reason` set). */
  sawFinish = false;
  /** Whether the `data: [DONE]` terminator arrived. */
  sawDone = false;
  /**
   * The last run of events ended in a CR, whose LF (if it is a CRLF) opens the next run: that LF
   * belongs to the event before, kept or dropped with it.
   */
  private endedInCr = false;
  private droppedTheCr = false;

  constructor(options: StreamTapOptions) {
    this.options = options;
  }

  /** Takes an upstream chunk; returns the bytes of the complete events to forward (possibly empty). */
  push(chunk: Uint8Array): Buffer {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let complete = this.events.push(bytes);
    if (complete.length === 0) return EMPTY;
    let firstEventAt = 0;
    if (this.endedInCr) {
      this.endedInCr = false;
      if (complete[0] === LF) {
        if (this.droppedTheCr) complete = complete.subarray(1);
        else firstEventAt = 1;
      }
      this.droppedTheCr = false;
      if (complete.length === 0) return EMPTY;
    }
    if (!this.sawFinish && complete.includes(FINISH)) this.sawFinish = true;
    if (!this.sawDone && complete.includes(DONE)) this.sawDone = true;
    const usageAt = complete.indexOf(USAGE);
    const out = usageAt < 0 ? complete : this.inspectUsage(complete, usageAt, firstEventAt);
    if (complete[complete.length - 1] === CR) this.endedInCr = true;
    return out;
  }

  /** Bytes of an incomplete event left when the stream ended (dropped, never forwarded). */
  get pendingBytes(): number {
    return this.events.pendingBytes;
  }

  /** Whether the stream reached a proper end: the terminator, or every choice finished. */
  get complete(): boolean {
    return this.sawDone || this.sawFinish;
  }

  /**
   * Reads the usage of the events that mention it, and drops usage-only chunks when asked. Only
   * those events are decoded and parsed (found by a byte search); the rest pass as they came.
   */
  private inspectUsage(complete: Buffer, first: number, firstEventAt: number): Buffer {
    let kept: Buffer[] | undefined;
    let keptFrom = 0;
    this.droppedTheCr = false;
    for (let at = first; at >= 0; ) {
      const start = Math.max(firstEventAt, eventStart(complete, at));
      const end = eventEnd(complete, at);
      if (this.isUsageOnly(complete.toString('utf8', start, end))) {
        kept ??= [];
        if (start > keptFrom) kept.push(complete.subarray(keptFrom, start));
        keptFrom = end;
      }
      at = complete.indexOf(USAGE, end);
    }
    if (!kept) return complete;
    if (keptFrom < complete.length) kept.push(complete.subarray(keptFrom));
    else this.droppedTheCr = true;
    return kept.length === 1 ? kept[0]! : Buffer.concat(kept);
  }

  /** Notes the usage of one event; true when the event is a usage-only chunk to drop. */
  private isUsageOnly(event: string): boolean {
    const data = eventData(event);
    if (!data.includes('"usage"') || data === '[DONE]') return false;
    try {
      const json = JSON.parse(data) as { choices?: unknown[] };
      const usage = this.options.usageOf(json);
      if (usage) this.usage = usage;
      return this.options.stripUsageOnlyChunks && Array.isArray(json.choices) && json.choices.length === 0;
    } catch {
      return false; // Not JSON: forward as it came.
    }
  }
}

/** A line ending: CRLF, LF or a lone CR. */
export const LINE_ENDING = /\r\n|\r|\n/;

/** A blank line between events: a line ending (a CR only when no LF follows, or it would be CRLF's) then another. */
export const EVENT_SEPARATOR = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)/;

/**
 * The data of one event: its `data:` lines joined (empty for an event without any, a comment say). The
 * usual event is a single `data:` line, read without splitting.
 */
export function eventData(event: string): string {
  if (event.startsWith('data:')) {
    const end = event.search(/[\r\n]/);
    const rest = end < 0 ? '' : event.slice(end).trimStart();
    if (rest.length === 0) return event.slice(5, end < 0 ? undefined : end).trimStart();
  }
  return event
    .split(LINE_ENDING)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
}

// The two scans below stay within one event (a few hundred bytes), so plain loops beat native searches' call cost.

/** Start of the event holding byte `at`: just after the blank line before it, or 0. */
function eventStart(data: Buffer, at: number): number {
  for (let i = at - 2; i >= 0; i--) {
    const end = blankLineEnd(data, i);
    if (end >= 0 && end <= at) return end;
  }
  return 0;
}

/** End of the event holding byte `at`: just after its blank line (`data` ends with one). */
function eventEnd(data: Buffer, at: number): number {
  const n = data.length;
  for (let i = at; i < n - 1; i++) {
    const end = blankLineEnd(data, i);
    if (end >= 0) return end;
  }
  return n;
}
