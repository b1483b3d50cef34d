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

/** End of the last complete event in `data` (index just after its blank line), or -1. */
export function lastEventEnd(data: Buffer): number {
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
  private carry: Buffer = Buffer.alloc(0);
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
      return Buffer.alloc(0);
    }
    const complete = data.subarray(0, end);
    // Copy the remainder: `data` may be the upstream's buffer, which undici can reuse.
    this.carry = end < data.length ? Buffer.from(data.subarray(end)) : Buffer.alloc(0);
    if (!this.sawFinish && complete.includes(FINISH)) this.sawFinish = true;
    if (!this.sawDone && complete.includes(DONE)) this.sawDone = true;
    return complete.includes(USAGE) ? this.inspectUsage(complete) : complete;
  }

  /** Bytes of an incomplete event left when the stream ended (dropped, never forwarded). */
  get pendingBytes(): number {
    return this.carry.length;
  }

  /** Whether the stream reached a proper end: the terminator, or every choice finished. */
  get complete(): boolean {
    return this.sawDone || this.sawFinish;
  }

  private inspectUsage(complete: Buffer): Buffer {
    const events = complete.toString('utf8').split(/(?<=\n\n|\r\n\r\n)/);
    let dropped = false;
    const kept: string[] = [];
    for (const event of events) {
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data.includes('"usage"') && data !== '[DONE]') {
        try {
          const json = JSON.parse(data) as { choices?: unknown[] };
          const usage = this.options.usageOf(json);
          if (usage) this.usage = usage;
          if (this.options.stripUsageOnlyChunks && Array.isArray(json.choices) && json.choices.length === 0) {
            dropped = true;
            continue;
          }
        } catch {
          // Not JSON: forward as it came.
        }
      }
      kept.push(event);
    }
    return dropped ? Buffer.from(kept.join(''), 'utf8') : complete;
  }
}
