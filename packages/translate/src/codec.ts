/**
 * @module codec
 * What each API family provides to the translator: a decoder and an encoder
 * for requests, complete responses and streams, in and out of the neutral
 * model of `ir.ts`.
 */
import type { ApiFamily } from './apiFamily.js';
import type { ErrorInfo } from './errorShapes.js';
import type { Json } from './fields.js';
import type { ChatRequest, ChatResponse, EncodeContext, StreamEvent } from './ir.js';
import type { SseEvent } from './sseParser.js';

/** Where a request is decoded from: the model and stream flag may live outside the body (Gemini's URL). */
export interface DecodeContext {
  model: string;
  stream: boolean;
  /**
   * What to do with a tool only the client's own provider runs (Responses'
   * `web_search`, Anthropic's server tools, Gemini's `googleSearch`, …):
   * `drop` leaves it out and names it in {@link ChatRequest.dropped};
   * `refuse` fails with `unsupported_translation`. Default `drop`.
   */
  hostedTools?: HostedToolsPolicy;
}

/** How hosted tools the upstream cannot run are treated: left out (and named as dropped), or refused. */
export type HostedToolsPolicy = 'drop' | 'refuse';

/** Settings for encoding a request to an upstream family. */
export interface EncodeRequestOptions {
  /** Sent as `max_tokens` when the client gave none and the family requires it (Anthropic). Default 4096. */
  defaultMaxTokens?: number;
  /** OpenAI chat: the field that carries the output limit (default `max_tokens`; OpenAI's reasoning models want `max_completion_tokens`). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /**
   * Anthropic: how each model (a glob over the upstream model name) is asked
   * to think, checked in order before `DEFAULT_THINKING_MODES`
   * (`anthropic/thinkingModes`).
   */
  thinkingModes?: Readonly<Record<string, AnthropicThinkingMode>>;
}

/**
 * How Anthropic is asked to think: `budget` is `thinking: {type: "enabled",
 * budget_tokens}`, `adaptive` is `thinking: {type: "adaptive"}` with the
 * level in `output_config.effort`.
 */
export type AnthropicThinkingMode = 'budget' | 'adaptive';

/** Turns one family's upstream events into neutral stream events. */
export interface StreamDecoder {
  push(event: SseEvent): StreamEvent[];
}

/** Turns neutral stream events into one family's server-sent events. */
export interface StreamEncoder {
  /** SSE text for one event (possibly empty). */
  push(event: StreamEvent): string;
  /** SSE text that ends the stream properly (terminator, closing events); empty once ended. */
  end(): string;
  /** SSE text that ends the stream with an error event, after bytes have gone out. */
  fail(error: ErrorInfo): string;
  /** Whether the stream has been ended (by `end`, `fail` or an error event). */
  readonly ended: boolean;
}

/** Options of a stream encoder. */
export interface StreamEncodeContext extends EncodeContext {
  /** OpenAI chat: send the usage chunk (the client set `stream_options.include_usage`). */
  includeUsage?: boolean;
}

/** A family's translators. */
export interface FamilyCodec {
  readonly family: ApiFamily;
  /** Reads a client's (or a test's) request body; throws `TranslationError` naming the bad field. */
  decodeRequest(body: Json, context: DecodeContext): ChatRequest;
  /** Writes a request for this family. Fields it cannot express are refused or appended to `request.dropped`. */
  encodeRequest(request: ChatRequest, options?: EncodeRequestOptions): Json;
  /** Reads a complete response. */
  decodeResponse(json: unknown): ChatResponse;
  /** Writes a complete response. */
  encodeResponse(response: ChatResponse, context: EncodeContext): Json;
  streamDecoder(): StreamDecoder;
  streamEncoder(context: StreamEncodeContext): StreamEncoder;
  /** The family's error body. */
  errorBody(error: ErrorInfo, requestId?: string): Json;
  /** The family's in-stream error event, for a stream with no encoder state (pass-through). */
  streamError(error: ErrorInfo): string;
}
