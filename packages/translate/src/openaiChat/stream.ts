/**
 * @module openaiChat/stream
 * OpenAI chat completion chunks in and out of neutral stream events. Out:
 * a role chunk first, content, `reasoning_content` and `tool_calls` deltas,
 * one chunk carrying `finish_reason`, the usage chunk (`choices: []`) when
 * the client asked for it, then `data: [DONE]`. An error is one `data:`
 * event with an `error` member, which OpenAI's SDKs raise as an APIError.
 */
import type { StreamDecoder, StreamEncodeContext } from '../codec.js';
import { type ContentEvent, EncoderBase } from '../encoderBase.js';
import { type ErrorInfo, openAiErrorBody, statusOfErrorType } from '../errorShapes.js';
import { isObject, type Json } from '../fields.js';
import type { StopReason, StreamEvent } from '../ir.js';
import { type SseEvent, sseEvent } from '../sseParser.js';
import { openAiChatUsage, openAiFinishReason, stopReasonFromOpenAi, usageFromOpenAiChat } from './response.js';

/** Reads an OpenAI chat completion stream. */
export class ChatStreamDecoder implements StreamDecoder {
  private started = false;
  private readonly calls = new Set<number>();

  push(sse: SseEvent): StreamEvent[] {
    if (sse.data === '[DONE]') return [{ type: 'end' }];
    let chunk: unknown;
    try {
      chunk = JSON.parse(sse.data);
    } catch {
      return [];
    }
    if (!isObject(chunk)) return [];
    const out: StreamEvent[] = [];
    if (isObject(chunk.error)) {
      const errorType = String(chunk.error.type ?? chunk.error.code ?? 'api_error');
      const status = statusOfErrorType(errorType);
      return [{ type: 'error', message: String(chunk.error.message ?? 'upstream error'), errorType, ...(status ? { status } : {}) }];
    }
    if (!this.started) {
      this.started = true;
      out.push({
        type: 'start',
        ...(typeof chunk.id === 'string' ? { id: chunk.id } : {}),
        ...(typeof chunk.model === 'string' ? { model: chunk.model } : {}),
      });
    }
    const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : undefined;
    const delta = choice && isObject(choice.delta) ? choice.delta : undefined;
    if (delta) {
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning.length > 0) out.push({ type: 'thinking', text: reasoning });
      if (typeof delta.content === 'string' && delta.content.length > 0) out.push({ type: 'text', text: delta.content });
      if (Array.isArray(delta.tool_calls)) {
        for (const raw of delta.tool_calls) {
          if (!isObject(raw)) continue;
          const index = typeof raw.index === 'number' ? raw.index : 0;
          const fn = isObject(raw.function) ? raw.function : {};
          if (!this.calls.has(index)) {
            this.calls.add(index);
            out.push({ type: 'tool_call_start', index, id: String(raw.id ?? `call_${index}`), name: String(fn.name ?? '') });
          }
          if (typeof fn.arguments === 'string' && fn.arguments.length > 0)
            out.push({ type: 'tool_call_delta', index, arguments: fn.arguments });
        }
      }
    }
    const usage = usageFromOpenAiChat(chunk.usage);
    if (usage) out.push({ type: 'usage', usage });
    if (choice && typeof choice.finish_reason === 'string')
      out.push({ type: 'finish', stopReason: stopReasonFromOpenAi(choice.finish_reason, this.calls.size > 0) });
    return out;
  }
}

/** Writes an OpenAI chat completion stream. */
export class ChatStreamEncoder extends EncoderBase {
  // Each tool_calls delta names its call's index: parallel calls' arguments may arrive interleaved.
  protected override readonly interleavesCalls = true;
  private id: string;
  private readonly created: number;
  private sentRole = false;
  private readonly toolIndex = new Map<number, number>();

  constructor(private readonly context: StreamEncodeContext) {
    super();
    this.id = `chatcmpl-${context.requestId}`;
    this.created = Math.floor(context.now / 1000);
  }

  private chunk(delta: Json, finish: string | null = null): string {
    return sseEvent({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.context.model,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    });
  }

  private role(): string {
    if (this.sentRole) return '';
    this.sentRole = true;
    return this.chunk({ role: 'assistant', content: '' });
  }

  protected content(event: ContentEvent): string {
    switch (event.type) {
      case 'start':
        if (event.id) this.id = event.id;
        return this.role();
      case 'text':
        return this.role() + this.chunk({ content: event.text });
      case 'thinking':
        return this.role() + this.chunk({ reasoning_content: event.text });
      case 'tool_call_start': {
        const index = this.toolIndex.size;
        this.toolIndex.set(event.index, index);
        return (
          this.role() +
          this.chunk({ tool_calls: [{ index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }] })
        );
      }
      case 'tool_call_delta':
        return this.chunk({ tool_calls: [{ index: this.toolIndex.get(event.index) ?? 0, function: { arguments: event.arguments } }] });
      default:
        return '';
    }
  }

  /** OpenAI announces the finish reason at once, in its own chunk. */
  protected override finish(reason: StopReason): string {
    if (this.stop !== undefined) return '';
    this.stop = reason;
    return this.role() + this.chunk({}, openAiFinishReason(reason));
  }

  protected closing(): string {
    let out = this.stop === undefined ? `${this.role()}${this.chunk({}, 'stop')}` : '';
    if (this.context.includeUsage && this.usage) {
      out += sseEvent({
        id: this.id,
        object: 'chat.completion.chunk',
        created: this.created,
        model: this.context.model,
        choices: [],
        usage: openAiChatUsage(this.usage),
      });
    }
    return `${out}data: [DONE]\n\n`;
  }

  protected errorEvent(error: ErrorInfo): string {
    return chatStreamError({ ...error, type: error.type ?? 'server_error' });
  }
}

/** The in-stream error event of the OpenAI chat family. */
export function chatStreamError(error: ErrorInfo): string {
  return sseEvent(openAiErrorBody(error));
}
