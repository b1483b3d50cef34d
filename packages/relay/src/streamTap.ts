/**
 * @module streamTap
 * What the attempt needs from a stream, whatever its family: bytes to
 * forward (whole events only), the token usage, whether the upstream
 * reached a proper end, the text that closes a finished stream, and the
 * error event that ends a broken one. Pass-through taps look for byte
 * markers and parse only the few events that carry usage, so the fast path
 * stays a byte copy; the translating tap runs the stream translator.
 */

import type { ErrorInfo, FamilyCodec, TokenUsage } from '@switchyard/translate';
import { codecFor, SseStreamDecoder, type StreamTranslator } from '@switchyard/translate';
import { isObject, type UpstreamStreamError, usageFromAnthropic, usageFromGemini, usageFromResponses } from '@switchyard/translate/wire';
import { EVENT_SEPARATOR, LINE_ENDING, OpenAiStreamTap, SseEventSplitter } from './sse.js';
import type { ApiFamily, Usage } from './types.js';

/** A stream as the attempt sees it. */
export interface StreamTap {
  /** Takes an upstream chunk; returns what to send the client now (possibly nothing). */
  push(chunk: Uint8Array): Uint8Array | string;
  /** Token usage reported so far. */
  readonly usage: Usage | undefined;
  /** Whether the upstream finished its answer. */
  readonly complete: boolean;
  /**
   * The upstream closed: settles {@link complete} (some streams show it only
   * now) and, when complete, returns the text that properly ends the stream
   * (a missing terminator, closing events; may be empty). When incomplete it
   * returns nothing and the stream is left for {@link fail}.
   */
  finish(): string;
  /** The error event that ends a stream broken after its first byte. */
  fail(error: ErrorInfo): string;
  /** A keep-alive the client's SDK ignores. */
  keepAlive(): string;
  /**
   * The first error event the upstream sent (forwarded to the client in its shape, like any other
   * event); the built-in taps all read it, and the attempt counts a stream that had one as failed.
   */
  readonly upstreamError?: UpstreamStreamError | undefined;
}

const EMPTY = Buffer.alloc(0);

/** The JSON of each `data:` payload in `text` whose event contains `marker`. */
function eventsWith(text: string, marker: string): unknown[] {
  const out: unknown[] = [];
  for (const event of text.split(EVENT_SEPARATOR)) {
    if (!event.includes(marker)) continue;
    const data = event
      .split(LINE_ENDING)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    try {
      out.push(JSON.parse(data));
    } catch {
      // Not JSON: nothing to read.
    }
  }
  return out;
}

/**
 * Every family's error event mentions this (an `error` field or `"type":"error"`); JSON inside
 * content is escaped (`\"error\"`), so answer text that talks about errors does not match.
 */
const ERROR_TEXT = '"error"';
const ERROR_MARKER = Buffer.from(ERROR_TEXT);

/**
 * The first error event among the whole events in `complete`, read by the family's own decoder.
 * Only the events that mention an error are decoded, so the pass-through stays a byte copy.
 */
function errorIn(complete: Buffer, family: ApiFamily): UpstreamStreamError | undefined {
  if (!complete.includes(ERROR_MARKER)) return undefined;
  const candidates = eventsMentioning(complete.toString('utf8'), ERROR_TEXT);
  if (candidates.length === 0) return undefined;
  const decoder = new SseStreamDecoder(codecFor(family).streamDecoder());
  const event = decoder.push(Buffer.from(`${candidates.join('\n\n')}\n\n`)).find((e) => e.type === 'error');
  if (event?.type !== 'error') return undefined;
  return {
    message: event.message,
    ...(event.errorType !== undefined ? { type: event.errorType } : {}),
    ...(event.status !== undefined ? { status: event.status } : {}),
  };
}

const eventsMentioning = (text: string, marker: string): string[] => text.split(EVENT_SEPARATOR).filter((e) => e.includes(marker));

const toUsage = (usage: TokenUsage | Partial<TokenUsage> | undefined): Usage | undefined =>
  usage && (usage.input !== undefined || usage.output !== undefined) ? { input: usage.input ?? 0, output: usage.output ?? 0 } : undefined;

/** What a pass-through tap looks for in one family's stream. */
interface FamilyMarkers {
  /** Any of these in an event means the stream reached its end. */
  terminal: Buffer[];
  /** Events with this marker carry usage. */
  usage: string;
  /** Neutral usage of one parsed usage-carrying event (merged over the stream). */
  usageOf(json: unknown): Partial<TokenUsage> | undefined;
  /** Whether only the last usage-carrying event matters (read lazily, once). */
  lastOnly: boolean;
}

const MARKERS: Partial<Record<ApiFamily, FamilyMarkers>> = {
  'anthropic-messages': {
    terminal: [Buffer.from('"message_stop"'), Buffer.from('event: error')],
    usage: '"usage"',
    usageOf: (json) =>
      isObject(json)
        ? usageFromAnthropic(json.type === 'message_start' && isObject(json.message) ? json.message.usage : json.usage)
        : undefined,
    lastOnly: false,
  },
  gemini: {
    terminal: [Buffer.from('"finishReason"'), Buffer.from('"blockReason"')],
    usage: 'usageMetadata',
    usageOf: (json) => usageFromGemini(isObject(json) ? (json.usageMetadata ?? json.usage_metadata) : undefined),
    lastOnly: true,
  },
  'openai-responses': {
    terminal: [
      Buffer.from('"response.completed"'),
      Buffer.from('"response.incomplete"'),
      Buffer.from('"response.failed"'),
      Buffer.from('event: error'),
    ],
    usage: '"response.completed"',
    usageOf: (json) => (isObject(json) && isObject(json.response) ? usageFromResponses(json.response.usage) : undefined),
    lastOnly: true,
  },
};

/** Passes a non-OpenAI-chat stream through untouched, event by event. */
class PassThroughTap implements StreamTap {
  private readonly events = new SseEventSplitter();
  private sawTerminal = false;
  private merged: Partial<TokenUsage> | undefined;
  private lastUsageEvent: string | undefined;
  /** Anthropic: a `message_delta` with a stop reason also means the answer is complete. */
  private sawStopReason = false;
  upstreamError: UpstreamStreamError | undefined;

  constructor(
    private readonly markers: FamilyMarkers,
    private readonly codec: FamilyCodec,
  ) {}

  push(chunk: Uint8Array): Buffer {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const complete = this.events.push(bytes);
    if (complete.length === 0) return EMPTY;
    if (!this.sawTerminal && this.markers.terminal.some((m) => complete.includes(m))) this.sawTerminal = true;
    if (this.codec.family === 'anthropic-messages' && !this.sawStopReason && complete.includes('"stop_reason":"'))
      this.sawStopReason = true;
    this.upstreamError ??= errorIn(complete, this.codec.family);
    if (complete.includes(this.markers.usage)) {
      const text = complete.toString('utf8');
      if (this.markers.lastOnly) {
        this.lastUsageEvent = eventsMentioning(text, this.markers.usage).at(-1);
      } else {
        for (const json of eventsWith(text, this.markers.usage)) {
          const usage = this.markers.usageOf(json);
          if (usage) this.merged = { ...this.merged, ...Object.fromEntries(Object.entries(usage).filter(([, v]) => v !== undefined)) };
        }
      }
    }
    return complete;
  }

  get usage(): Usage | undefined {
    if (this.lastUsageEvent !== undefined) {
      const json = eventsWith(this.lastUsageEvent, this.markers.usage)[0];
      this.merged = this.markers.usageOf(json);
      this.lastUsageEvent = undefined;
    }
    return toUsage(this.merged);
  }

  get complete(): boolean {
    return this.sawTerminal || this.sawStopReason;
  }

  finish(): string {
    // Anthropic streams that stopped after message_delta still get their message_stop.
    if (this.codec.family === 'anthropic-messages' && this.complete && !this.sawTerminal)
      return 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    return '';
  }

  fail(error: ErrorInfo): string {
    return this.codec.streamError(error);
  }

  keepAlive(): string {
    return keepAliveFor(this.codec.family);
  }
}

/** The keep-alive of a family: Anthropic's own `ping` event, an SSE comment for the others. */
export function keepAliveFor(family: ApiFamily): string {
  return family === 'anthropic-messages' ? 'event: ping\ndata: {"type":"ping"}\n\n' : ': keep-alive\n\n';
}

/** The OpenAI chat tap, behind the common interface. */
class OpenAiChatTap implements StreamTap {
  upstreamError: UpstreamStreamError | undefined;
  constructor(private readonly tap: OpenAiStreamTap) {}
  push(chunk: Uint8Array): Buffer {
    const out = this.tap.push(chunk);
    this.upstreamError ??= errorIn(out, 'openai-chat');
    return out;
  }
  get usage(): Usage | undefined {
    return this.tap.usage;
  }
  get complete(): boolean {
    return this.tap.complete;
  }
  finish(): string {
    // A stream that finished its choices but lacked the terminator still ends the way clients expect.
    return this.tap.sawDone || !this.tap.complete ? '' : 'data: [DONE]\n\n';
  }
  fail(error: ErrorInfo): string {
    return codecFor('openai-chat').streamError(error);
  }
  keepAlive(): string {
    return keepAliveFor('openai-chat');
  }
}

/**
 * A tap that forwards a family's stream untouched.
 *
 * @example
 * ```ts
 * const tap = passThroughTap('anthropic-messages', { stripUsageOnlyChunks: false, usageOf: () => undefined });
 * ```
 */
export function passThroughTap(family: ApiFamily, openAi: ConstructorParameters<typeof OpenAiStreamTap>[0]): StreamTap {
  if (family === 'openai-chat') return new OpenAiChatTap(new OpenAiStreamTap(openAi));
  return new PassThroughTap(MARKERS[family]!, codecFor(family));
}

/** A tap that translates the stream to the client's family. */
export class TranslatingTap implements StreamTap {
  constructor(
    private readonly translator: StreamTranslator,
    private readonly family: ApiFamily,
  ) {}

  push(chunk: Uint8Array): string {
    return this.translator.push(chunk);
  }

  get usage(): Usage | undefined {
    return toUsage(this.translator.usage);
  }

  get complete(): boolean {
    // An upstream error event was forwarded in the client's shape: the stream ended as the upstream meant
    // (the attempt still reads `upstreamError` to count it as failed).
    return this.translator.complete || this.translator.errored;
  }

  finish(): string {
    return this.translator.ended ? '' : this.translator.finish();
  }

  fail(error: ErrorInfo): string {
    return this.translator.fail(error);
  }

  keepAlive(): string {
    return keepAliveFor(this.family);
  }

  get upstreamError(): UpstreamStreamError | undefined {
    return this.translator.upstreamError;
  }
}
