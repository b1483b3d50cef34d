/**
 * @module anthropic/stream
 * Anthropic's stream in and out of neutral events. Out, always the full
 * documented sequence: `message_start`, then for each block
 * `content_block_start`, its deltas (`text_delta`, `thinking_delta`,
 * `signature_delta`, `input_json_delta`) and `content_block_stop`, then
 * `message_delta` (stop reason and usage: output tokens, and the input
 * tokens, which other families only report at the end) and `message_stop`.
 * Errors are `event: error`, which Anthropic's SDKs raise.
 */

import type { StreamDecoder, StreamEncodeContext } from '../codec.js';
import { derivedId } from '../common.js';
import { type ContentEvent, EncoderBase } from '../encoderBase.js';
import { anthropicErrorBody, type ErrorInfo, statusOfErrorType } from '../errorShapes.js';
import { isObject, type Json } from '../fields.js';
import type { StreamEvent } from '../ir.js';
import { type SseEvent, sseEvent } from '../sseParser.js';
import { anthropicStopReason, anthropicUsage, stopReasonFromAnthropic, usageFromAnthropic } from './response.js';

/** Reads an Anthropic Messages stream. */
export class MessagesStreamDecoder implements StreamDecoder {
  /** Block index → tool call index, for `input_json_delta`. */
  private readonly tools = new Map<number, number>();
  private cacheCounts: { cacheRead?: number; cacheWrite?: number } = {};

  push(sse: SseEvent): StreamEvent[] {
    let event: unknown;
    try {
      event = JSON.parse(sse.data);
    } catch {
      return [];
    }
    if (!isObject(event)) return [];
    switch (event.type) {
      case 'message_start': {
        const message = isObject(event.message) ? event.message : {};
        const usage = usageFromAnthropic(message.usage);
        if (usage?.cacheRead !== undefined) this.cacheCounts.cacheRead = usage.cacheRead;
        if (usage?.cacheWrite !== undefined) this.cacheCounts.cacheWrite = usage.cacheWrite;
        return [
          {
            type: 'start',
            ...(typeof message.id === 'string' ? { id: message.id } : {}),
            ...(typeof message.model === 'string' ? { model: message.model } : {}),
            ...(usage ? { usage } : {}),
          },
        ];
      }
      case 'content_block_start': {
        const block = isObject(event.content_block) ? event.content_block : {};
        const index = typeof event.index === 'number' ? event.index : 0;
        if (block.type === 'tool_use') {
          const toolIndex = this.tools.size;
          this.tools.set(index, toolIndex);
          const out: StreamEvent[] = [
            { type: 'tool_call_start', index: toolIndex, id: String(block.id ?? ''), name: String(block.name ?? '') },
          ];
          if (isObject(block.input) && Object.keys(block.input).length > 0)
            out.push({ type: 'tool_call_delta', index: toolIndex, arguments: JSON.stringify(block.input) });
          return out;
        }
        if (block.type === 'text' && typeof block.text === 'string' && block.text.length > 0) return [{ type: 'text', text: block.text }];
        if (block.type === 'thinking' && typeof block.thinking === 'string' && block.thinking.length > 0)
          return [{ type: 'thinking', text: block.thinking }];
        return [];
      }
      case 'content_block_delta': {
        const delta = isObject(event.delta) ? event.delta : {};
        const index = typeof event.index === 'number' ? event.index : 0;
        if (delta.type === 'text_delta' && typeof delta.text === 'string') return [{ type: 'text', text: delta.text }];
        if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') return [{ type: 'thinking', text: delta.thinking }];
        if (delta.type === 'signature_delta' && typeof delta.signature === 'string')
          return [{ type: 'thinking_signature', signature: delta.signature }];
        if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json.length > 0)
          return [{ type: 'tool_call_delta', index: this.tools.get(index) ?? 0, arguments: delta.partial_json }];
        return [];
      }
      case 'message_delta': {
        const out: StreamEvent[] = [];
        // message_delta's usage is cumulative; input and cache counts appear only when they changed.
        const usage = isObject(event.usage) ? event.usage : {};
        const merged = {
          cache_read_input_tokens: this.cacheCounts.cacheRead,
          cache_creation_input_tokens: this.cacheCounts.cacheWrite,
          ...usage,
        };
        const update = usageFromAnthropic(merged);
        if (update) out.push({ type: 'usage', usage: update });
        const delta = isObject(event.delta) ? event.delta : {};
        if (typeof delta.stop_reason === 'string') {
          const finish: StreamEvent = { type: 'finish', stopReason: stopReasonFromAnthropic(delta.stop_reason) };
          if (typeof delta.stop_sequence === 'string') finish.stopSequence = delta.stop_sequence;
          out.push(finish);
        }
        return out;
      }
      case 'message_stop':
        return [{ type: 'end' }];
      case 'error': {
        const error = isObject(event.error) ? event.error : {};
        const errorType = String(error.type ?? 'api_error');
        const status = statusOfErrorType(errorType);
        return [{ type: 'error', message: String(error.message ?? 'upstream error'), errorType, ...(status ? { status } : {}) }];
      }
      default:
        return [];
    }
  }
}

type OpenBlock = { kind: 'text' | 'thinking' | 'tool'; index: number } | undefined;

/** Writes an Anthropic Messages stream. */
export class MessagesStreamEncoder extends EncoderBase {
  private started = false;
  private id: string;
  private blockCount = 0;
  private open: OpenBlock;
  private readonly toolBlocks = new Map<number, number>();

  constructor(private readonly context: StreamEncodeContext) {
    super();
    this.id = derivedId('msg_', context.requestId);
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const message = {
      id: this.id,
      type: 'message',
      role: 'assistant',
      model: this.context.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: anthropicUsage({
        input: this.usage?.input ?? 0,
        output: 0,
        ...(this.usage?.cacheRead !== undefined ? { cacheRead: this.usage.cacheRead } : {}),
      }),
    };
    return sseEvent({ type: 'message_start', message }, 'message_start');
  }

  private close(): string {
    if (!this.open) return '';
    const index = this.open.index;
    this.open = undefined;
    return sseEvent({ type: 'content_block_stop', index }, 'content_block_stop');
  }

  private openBlock(kind: 'text' | 'thinking' | 'tool', block: Json): string {
    const out = this.close();
    const index = this.blockCount++;
    this.open = { kind, index };
    return out + sseEvent({ type: 'content_block_start', index, content_block: block }, 'content_block_start');
  }

  private delta(index: number, delta: Json): string {
    return sseEvent({ type: 'content_block_delta', index, delta }, 'content_block_delta');
  }

  protected content(event: ContentEvent): string {
    switch (event.type) {
      case 'start':
        if (event.id?.startsWith('msg_')) this.id = event.id;
        return this.start();
      case 'text': {
        let out = this.start();
        if (this.open?.kind !== 'text') out += this.openBlock('text', { type: 'text', text: '' });
        return out + this.delta(this.open!.index, { type: 'text_delta', text: event.text });
      }
      case 'thinking': {
        let out = this.start();
        if (this.open?.kind !== 'thinking') out += this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
        return out + this.delta(this.open!.index, { type: 'thinking_delta', thinking: event.text });
      }
      case 'thinking_signature':
        if (this.open?.kind !== 'thinking') return '';
        return this.delta(this.open.index, { type: 'signature_delta', signature: event.signature });
      case 'tool_call_start': {
        const out = this.start() + this.openBlock('tool', { type: 'tool_use', id: event.id, name: event.name, input: {} });
        this.toolBlocks.set(event.index, this.open!.index);
        return out;
      }
      case 'tool_call_delta': {
        const index = this.toolBlocks.get(event.index);
        return index === undefined ? '' : this.delta(index, { type: 'input_json_delta', partial_json: event.arguments });
      }
      default:
        return '';
    }
  }

  protected closing(): string {
    const usage = anthropicUsage(this.usage ?? { input: 0, output: 0 });
    const delta = { stop_reason: anthropicStopReason(this.stop ?? 'end_turn'), stop_sequence: this.stopSequence ?? null };
    return (
      this.start() +
      this.close() +
      sseEvent({ type: 'message_delta', delta, usage }, 'message_delta') +
      sseEvent({ type: 'message_stop' }, 'message_stop')
    );
  }

  protected errorEvent(error: ErrorInfo): string {
    return messagesStreamError(error);
  }
}

/** The in-stream error event of the Anthropic family. */
export function messagesStreamError(error: ErrorInfo): string {
  return sseEvent(anthropicErrorBody(error), 'error');
}
