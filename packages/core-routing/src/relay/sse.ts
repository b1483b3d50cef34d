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
import type { Usage } from './types.js';

const DONE = Buffer.from('data: [DONE]');
const USAGE = Buffer.from('"usage"');
const FINISH = Buffer.from('"finish_reason":"');
const LF_LF = Buffer.from('\n\n');
const LF_CR_LF = Buffer.from('\n\r\n');

const EMPTY = Buffer.alloc(0);
const LF = 0x0a;
const CR = 0x0d;

/** End of the last complete event in `data` (index just after its blank line), or -1. */
export function lastEventEnd(data: Buffer): number {
  const n = data.length;
  // The usual chunk ends exactly at an event's end: look there before searching the whole chunk.
  if (n >= 2 && data[n - 1] === LF && (data[n - 2] === LF || (n >= 3 && data[n - 2] === CR && data[n - 3] === LF))) return n;
  const lf = data.lastIndexOf(LF_LF);
  const crlf = data.lastIndexOf(LF_CR_LF);
  return Math.max(lf < 0 ? -1 : lf + 2, crlf < 0 ? -1 : crlf + 3);
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
  private carry: Buffer = EMPTY;
  private readonly options: StreamTapOptions;
  /** Usage reported by the stream, if any. */
  usage: Usage | undefined;
  /** Whether a choice finished (`finish_reason` set). */
  sawFinish = false;
  /** Whether the `data: [DONE]` terminator arrived. */
  sawDone = false;

  constructor(options: StreamTapOptions) {
    this.options = options;
  }

  /** Takes an upstream chunk; returns the bytes of the complete events to forward (possibly empty). */
  push(chunk: Uint8Array): Buffer {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const data = this.carry.length === 0 ? bytes : Buffer.concat([this.carry, bytes]);
    const end = lastEventEnd(data);
    if (end < 0) {
      this.carry = Buffer.from(data);
      return EMPTY;
    }
    const complete = end === data.length ? data : data.subarray(0, end);
    // Copy the remainder: `data` may be the upstream's buffer, which undici can reuse.
    this.carry = end < data.length ? Buffer.from(data.subarray(end)) : EMPTY;
    if (!this.sawFinish && complete.includes(FINISH)) this.sawFinish = true;
    if (!this.sawDone && complete.includes(DONE)) this.sawDone = true;
    const usageAt = complete.indexOf(USAGE);
    return usageAt < 0 ? complete : this.inspectUsage(complete, usageAt);
  }

  /** Bytes of an incomplete event left when the stream ended (dropped, never forwarded). */
  get pendingBytes(): number {
    return this.carry.length;
  }

  /** Whether the stream reached a proper end: the terminator, or every choice finished. */
  get complete(): boolean {
    return this.sawDone || this.sawFinish;
  }

  /**
   * Reads the usage of the events that mention it, and drops usage-only chunks when asked. Only
   * those events are decoded and parsed (found by a byte search); the rest pass as they came.
   */
  private inspectUsage(complete: Buffer, first: number): Buffer {
    let kept: Buffer[] | undefined;
    let keptFrom = 0;
    for (let at = first; at >= 0; ) {
      const start = eventStart(complete, at);
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

/**
 * The data of one event: its `data:` lines joined (empty for an event without any, a comment say). The
 * usual event is a single `data:` line, read without splitting.
 */
export function eventData(event: string): string {
  if (event.startsWith('data:')) {
    const end = event.search(/\r?\n/);
    const rest = end < 0 ? '' : event.slice(end).trimStart();
    if (rest.length === 0) return event.slice(5, end < 0 ? undefined : end).trimStart();
  }
  return event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
}

// The two scans below stay within one event (a few hundred bytes), so plain loops beat native searches' call cost.

/** Start of the event holding byte `at`: just after the blank line before it, or 0. */
function eventStart(data: Buffer, at: number): number {
  for (let i = at - 1; i >= 1; i--) {
    if (data[i] === LF && (data[i - 1] === LF || (i >= 2 && data[i - 1] === CR && data[i - 2] === LF))) return i + 1;
  }
  return 0;
}

/** End of the event holding byte `at`: just after its blank line (`data` ends with one). */
function eventEnd(data: Buffer, at: number): number {
  const n = data.length;
  for (let i = at; i < n - 1; i++) {
    if (data[i] !== LF) continue;
    if (data[i + 1] === LF) return i + 2;
    if (data[i + 1] === CR && data[i + 2] === LF) return i + 3;
  }
  return n;
}
