/**
 * @module streamTranslator
 * A stateful translator from an upstream's byte stream to a client's
 * server-sent events: bytes → (SSE parser →) upstream decoder → neutral
 * events → client encoder → SSE text. Along the way it keeps what the relay
 * needs: the token usage, and whether the upstream reached a proper end, so
 * a stream cut short can be ended cleanly with an error event instead of
 * just stopping.
 */
import type { ApiFamily } from './apiFamily.js';
import type { StreamDecoder, StreamEncodeContext, StreamEncoder } from './codec.js';
import type { ErrorInfo } from './errorShapes.js';
import { codecFor } from './families.js';
import { compact } from './fields.js';
import { mergeUsage, type StreamEvent, type TokenUsage } from './ir.js';
import { SseParser } from './sseParser.js';

/** An error event inside an upstream's stream. */
export interface UpstreamStreamError {
  message: string;
  /** The family's error type (`overloaded_error`, `rate_limit_error`, `RESOURCE_EXHAUSTED`, …). */
  type?: string;
  /** The HTTP status the error stands for, when known. */
  status?: number;
}

/** Turns upstream bytes into neutral events (SSE for the four families; a provider's own framing otherwise). */
export interface ByteStreamDecoder {
  push(chunk: Uint8Array): StreamEvent[];
  /** The upstream closed; events still held back, if any. */
  end(): StreamEvent[];
}

/** A family's SSE decoder behind the byte interface. */
export class SseStreamDecoder implements ByteStreamDecoder {
  private readonly parser = new SseParser();

  constructor(private readonly decoder: StreamDecoder) {}

  push(chunk: Uint8Array): StreamEvent[] {
    const events = this.parser.push(chunk);
    if (events.length === 0) return [];
    if (events.length === 1) return this.decoder.push(events[0]!);
    return events.flatMap((event) => this.decoder.push(event));
  }

  end(): StreamEvent[] {
    return this.parser.end().flatMap((event) => this.decoder.push(event));
  }
}

/**
 * Translates one stream.
 *
 * @example
 * ```ts
 * const translator = StreamTranslator.between('anthropic-messages', 'openai-chat', { model: 'claude', requestId: 'r1', now: Date.now() });
 * for await (const chunk of upstream) res.write(translator.push(chunk));
 * const closing = translator.finish();
 * res.end(translator.complete ? closing : translator.fail({ status: 502, code: 'upstream_error', message: 'cut short' }));
 * ```
 */
export class StreamTranslator {
  private usageSoFar: TokenUsage | undefined;
  private sawFinish = false;
  private sawEnd = false;
  private sawError = false;
  private firstError: UpstreamStreamError | undefined;

  constructor(
    private readonly decoder: ByteStreamDecoder,
    private readonly encoder: StreamEncoder,
  ) {}

  /** A translator between two SSE families. */
  static between(from: ApiFamily, to: ApiFamily, context: StreamEncodeContext): StreamTranslator {
    return new StreamTranslator(new SseStreamDecoder(codecFor(from).streamDecoder()), codecFor(to).streamEncoder(context));
  }

  /** Takes an upstream chunk; returns the client's SSE text for it (often empty). */
  push(chunk: Uint8Array): string {
    return this.emit(this.decoder.push(chunk));
  }

  /**
   * The upstream closed. If its answer is complete (some streams only show
   * that now), returns the closing events (terminator, `message_stop`, last
   * chunk); if not, returns what was left and leaves the stream open for
   * {@link fail}.
   */
  finish(): string {
    const out = this.emit(this.decoder.end());
    return this.complete || this.sawError ? out + this.encoder.end() : out;
  }

  /** Ends the stream with the client family's error event. */
  fail(error: ErrorInfo): string {
    return this.encoder.fail(error);
  }

  /** Token usage reported so far. */
  get usage(): TokenUsage | undefined {
    return this.usageSoFar;
  }

  /** Whether the upstream finished its answer (a stop reason or its end marker). */
  get complete(): boolean {
    return this.sawFinish || this.sawEnd;
  }

  /** Whether the upstream sent an error event (forwarded in the client's shape). */
  get errored(): boolean {
    return this.sawError;
  }

  /** The first error event the upstream sent, if any (what it said, and the status its type stands for). */
  get upstreamError(): UpstreamStreamError | undefined {
    return this.firstError;
  }

  /** Whether the client's stream has been ended. */
  get ended(): boolean {
    return this.encoder.ended;
  }

  private emit(events: StreamEvent[]): string {
    let out = '';
    for (const event of events) {
      if (event.type === 'usage') this.usageSoFar = mergeUsage(this.usageSoFar, event.usage);
      else if (event.type === 'start' && event.usage) this.usageSoFar = mergeUsage(this.usageSoFar, event.usage);
      else if (event.type === 'finish') this.sawFinish = true;
      else if (event.type === 'end') this.sawEnd = true;
      else if (event.type === 'error') {
        this.sawError = true;
        this.firstError ??= compact({ message: event.message, type: event.errorType, status: event.status });
      }
      out += this.encoder.push(event);
    }
    return out;
  }
}
