/**
 * @module gemini/stream
 * Gemini's `streamGenerateContent?alt=sse` stream in and out of neutral
 * events. Each event is a whole `GenerateContentResponse` holding the new
 * parts; there is no terminator: the last chunk carries `finishReason` and
 * the final `usageMetadata`. Function calls arrive whole, so when another
 * family streams arguments piecemeal the encoder holds each call until it is
 * complete. An error is a `data:` event with Google's error body.
 */

import type { StreamDecoder, StreamEncodeContext } from '../codec.js';
import { type ContentEvent, EncoderBase } from '../encoderBase.js';
import { type ErrorInfo, geminiErrorBody } from '../errorShapes.js';
import { TranslationError } from '../errors.js';
import { isObject, type Json } from '../fields.js';
import type { StreamEvent } from '../ir.js';
import { type SseEvent, sseEvent } from '../sseParser.js';
import { member } from './request.js';
import { geminiFinishReason, geminiParts, geminiUsage, stopReasonFromGemini, usageFromGemini } from './response.js';

/** Reads a Gemini SSE stream. */
export class GenerateContentStreamDecoder implements StreamDecoder {
  private started = false;
  private calls = 0;
  private finished = false;
  /** The last usage reported, so a chunk repeating it adds no event (Gemini repeats it in every chunk). */
  private lastUsage = '';

  push(sse: SseEvent): StreamEvent[] {
    let chunk: unknown;
    try {
      chunk = JSON.parse(sse.data);
    } catch {
      return [];
    }
    if (Array.isArray(chunk)) chunk = chunk[0];
    if (!isObject(chunk)) return [];
    if (isObject(chunk.error)) {
      const error = chunk.error;
      return [
        {
          type: 'error',
          message: String(error.message ?? 'upstream error'),
          errorType: String(error.status ?? 'INTERNAL'),
          ...(typeof error.code === 'number' ? { status: error.code } : {}),
        },
      ];
    }
    const out: StreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      const id = member(chunk, 'responseId');
      const model = member(chunk, 'modelVersion');
      out.push({ type: 'start', ...(typeof id === 'string' ? { id } : {}), ...(typeof model === 'string' ? { model } : {}) });
    }
    const candidate = Array.isArray(chunk.candidates) && isObject(chunk.candidates[0]) ? chunk.candidates[0] : undefined;
    const content = candidate && isObject(candidate.content) ? candidate.content : undefined;
    for (const part of Array.isArray(content?.parts) ? content.parts : []) {
      if (!isObject(part)) continue;
      const signature = member(part, 'thoughtSignature');
      const call = member(part, 'functionCall');
      if (typeof part.text === 'string') {
        if (part.thought === true) {
          if (part.text.length > 0) out.push({ type: 'thinking', text: part.text });
          if (typeof signature === 'string') out.push({ type: 'thinking_signature', signature });
        } else if (part.text.length > 0) out.push({ type: 'text', text: part.text });
      } else if (isObject(call)) {
        const index = this.calls++;
        out.push({
          type: 'tool_call_start',
          index,
          id: typeof call.id === 'string' ? call.id : `call_${index}`,
          name: String(call.name ?? ''),
          ...(typeof signature === 'string' ? { signature } : {}),
        });
        out.push({ type: 'tool_call_delta', index, arguments: JSON.stringify(call.args ?? {}) });
      }
    }
    const usage = usageFromGemini(member(chunk, 'usageMetadata'));
    if (usage) {
      const key = `${usage.input}/${usage.output}/${usage.reasoning}/${usage.cacheRead}`;
      if (key !== this.lastUsage) {
        this.lastUsage = key;
        out.push({ type: 'usage', usage });
      }
    }
    const feedback = member(chunk, 'promptFeedback');
    const reason = candidate ? member(candidate, 'finishReason') : undefined;
    if (!this.finished && isObject(feedback) && member(feedback, 'blockReason') !== undefined) {
      this.finished = true;
      out.push({ type: 'finish', stopReason: 'content_filter' });
    } else if (!this.finished && typeof reason === 'string' && reason !== 'FINISH_REASON_UNSPECIFIED') {
      this.finished = true;
      out.push({ type: 'finish', stopReason: stopReasonFromGemini(reason, this.calls > 0) });
    }
    return out;
  }
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
  signature?: string;
}

/** Writes a Gemini SSE stream. */
export class GenerateContentStreamEncoder extends EncoderBase {
  private id: string;
  private readonly pending = new Map<number, PendingCall>();

  constructor(private readonly context: StreamEncodeContext) {
    super();
    this.id = context.requestId;
  }

  private chunk(parts: Json[], final = false): string {
    const candidate: Json = { content: { role: 'model', parts }, index: 0 };
    if (final) candidate.finishReason = geminiFinishReason(this.stop ?? 'end_turn');
    const body: Json = { candidates: [candidate] };
    if (this.usage) body.usageMetadata = geminiUsage(this.usage);
    body.modelVersion = this.context.model;
    body.responseId = this.id;
    return sseEvent(body);
  }

  /** Completed function calls, as parts (their arguments are whole now). */
  private flushCalls(): Json[] {
    const parts = geminiParts(
      [...this.pending.values()].map((call) => ({
        type: 'tool_call' as const,
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        ...(call.signature ? { signature: call.signature } : {}),
      })),
    );
    this.pending.clear();
    return parts;
  }

  protected content(event: ContentEvent): string {
    return this.unlessUnreadable(() => this.contentOf(event));
  }

  /**
   * Runs a step that may flush held calls. A call whose arguments are not
   * JSON cannot become Gemini's `args` object: the stream ends with an error
   * event saying so (the same 502 `upstream_error` a complete answer gets),
   * instead of an exception the relay would report as a broken connection.
   */
  private unlessUnreadable(step: () => string): string {
    try {
      return step();
    } catch (error) {
      if (!(error instanceof TranslationError)) throw error;
      return this.fail({ status: 502, code: 'upstream_error', message: error.message });
    }
  }

  private contentOf(event: ContentEvent): string {
    switch (event.type) {
      case 'start':
        if (event.id) this.id = event.id;
        return '';
      case 'text':
        return this.chunk([...this.flushCalls(), { text: event.text }]);
      case 'thinking':
        return this.chunk([{ text: event.text, thought: true }]);
      case 'thinking_signature':
        return this.chunk([{ text: '', thought: true, thoughtSignature: event.signature }]);
      case 'tool_call_start': {
        const previous = this.pending.size > 0 ? this.flushCalls() : [];
        this.pending.set(event.index, {
          id: event.id,
          name: event.name,
          arguments: '',
          ...(event.signature ? { signature: event.signature } : {}),
        });
        return previous.length > 0 ? this.chunk(previous) : '';
      }
      case 'tool_call_delta': {
        const call = this.pending.get(event.index);
        if (call) call.arguments += event.arguments;
        return '';
      }
      default:
        return '';
    }
  }

  protected closing(): string {
    return this.unlessUnreadable(() => {
      const calls = this.flushCalls();
      return this.chunk(calls.length > 0 ? calls : [{ text: '' }], true);
    });
  }

  protected errorEvent(error: ErrorInfo): string {
    return geminiStreamError(error);
  }
}

/** The in-stream error event of the Gemini family. */
export function geminiStreamError(error: ErrorInfo): string {
  return sseEvent(geminiErrorBody(error));
}
