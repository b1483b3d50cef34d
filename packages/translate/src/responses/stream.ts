/**
 * @module responses/stream
 * The Responses API's typed event stream in and out of neutral events.
 * Out, as OpenAI sends it: `response.created`, `response.in_progress`, then
 * per output item `response.output_item.added`, its parts and deltas
 * (`output_text`, `function_call_arguments`, `reasoning_summary_text`), the
 * matching `.done` events and `response.output_item.done`, and finally
 * `response.completed` (or `response.incomplete`) with usage. Every event
 * carries `sequence_number`. An error is `event: error` with
 * `{type: "error", code, message, param}`.
 */

import type { StreamDecoder, StreamEncodeContext } from '../codec.js';
import { derivedId } from '../common.js';
import { type ContentEvent, EncoderBase } from '../encoderBase.js';
import { type ErrorInfo, statusOfErrorType } from '../errorShapes.js';
import { isObject, type Json } from '../fields.js';
import type { StreamEvent } from '../ir.js';
import { type SseEvent, sseEvent } from '../sseParser.js';
import { responsesCallItem } from './request.js';
import { callName, responseEnvelope, responsesStatus, responsesUsage, stopReasonFromResponses, usageFromResponses } from './response.js';

/** A Responses error (its `code` names the kind: `rate_limit_exceeded`, `server_error`, …) as a neutral event. */
function streamError(message: unknown, code: unknown): StreamEvent {
  const errorType = String(code ?? 'server_error');
  const status = statusOfErrorType(errorType);
  return { type: 'error', message: String(message), errorType, ...(status ? { status } : {}) };
}

/** Reads a Responses event stream. */
export class ResponsesStreamDecoder implements StreamDecoder {
  /** output_index → tool call index; and whether its arguments were streamed. */
  private readonly calls = new Map<number, { index: number; streamed: boolean }>();

  push(sse: SseEvent): StreamEvent[] {
    let event: unknown;
    try {
      event = JSON.parse(sse.data);
    } catch {
      return [];
    }
    if (!isObject(event)) return [];
    const type = typeof event.type === 'string' ? event.type : sse.event;
    const outputIndex = typeof event.output_index === 'number' ? event.output_index : 0;
    switch (type) {
      case 'response.created': {
        const response = isObject(event.response) ? event.response : {};
        return [
          {
            type: 'start',
            ...(typeof response.id === 'string' ? { id: response.id } : {}),
            ...(typeof response.model === 'string' ? { model: response.model } : {}),
          },
        ];
      }
      case 'response.output_item.added': {
        const item = isObject(event.item) ? event.item : {};
        if (item.type !== 'function_call') return [];
        const index = this.calls.size;
        this.calls.set(outputIndex, { index, streamed: false });
        const out: StreamEvent[] = [{ type: 'tool_call_start', index, id: String(item.call_id ?? item.id ?? ''), name: callName(item) }];
        if (typeof item.arguments === 'string' && item.arguments.length > 0) {
          this.calls.get(outputIndex)!.streamed = true;
          out.push({ type: 'tool_call_delta', index, arguments: item.arguments });
        }
        return out;
      }
      case 'response.function_call_arguments.delta': {
        const call = this.calls.get(outputIndex);
        if (!call || typeof event.delta !== 'string' || event.delta.length === 0) return [];
        call.streamed = true;
        return [{ type: 'tool_call_delta', index: call.index, arguments: event.delta }];
      }
      case 'response.output_item.done': {
        // A provider that sends arguments only with the finished item.
        const item = isObject(event.item) ? event.item : {};
        const call = this.calls.get(outputIndex);
        if (item.type !== 'function_call' || !call || call.streamed || typeof item.arguments !== 'string' || !item.arguments) return [];
        call.streamed = true;
        return [{ type: 'tool_call_delta', index: call.index, arguments: item.arguments }];
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return typeof event.delta === 'string' && event.delta.length > 0 ? [{ type: 'text', text: event.delta }] : [];
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return typeof event.delta === 'string' && event.delta.length > 0 ? [{ type: 'thinking', text: event.delta }] : [];
      case 'response.completed':
      case 'response.incomplete': {
        const response = isObject(event.response) ? event.response : {};
        const out: StreamEvent[] = [];
        const usage = usageFromResponses(response.usage);
        if (usage) out.push({ type: 'usage', usage });
        out.push({ type: 'finish', stopReason: stopReasonFromResponses(response, this.calls.size > 0) }, { type: 'end' });
        return out;
      }
      case 'response.failed': {
        const response = isObject(event.response) ? event.response : {};
        const error = isObject(response.error) ? response.error : {};
        return [streamError(error.message ?? 'the response failed', error.code)];
      }
      case 'error':
        return [streamError(event.message ?? 'upstream error', event.code)];
      default:
        return [];
    }
  }
}

type OpenItem =
  | { kind: 'message'; id: string; outputIndex: number; text: string }
  | { kind: 'reasoning'; id: string; outputIndex: number; text: string }
  | { kind: 'call'; id: string; outputIndex: number; callId: string; name: string; arguments: string; source: number; custom: boolean };

/** Writes a Responses event stream. */
export class ResponsesStreamEncoder extends EncoderBase {
  private sequence = 0;
  private started = false;
  private id: string;
  private readonly createdAt: number;
  private readonly output: Json[] = [];
  private open: OpenItem | undefined;
  private readonly calls = new Map<number, OpenItem & { kind: 'call' }>();

  constructor(private readonly context: StreamEncodeContext) {
    super();
    this.id = derivedId('resp_', context.requestId);
    this.createdAt = Math.floor(context.now / 1000);
  }

  private event(type: string, fields: Json): string {
    return sseEvent({ type, sequence_number: this.sequence++, ...fields }, type);
  }

  private envelope(): Json {
    return responseEnvelope(this.id, this.context, this.createdAt);
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const response = this.envelope();
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private close(): string {
    const item = this.open;
    if (!item) return '';
    this.open = undefined;
    const where = { item_id: item.id, output_index: item.outputIndex };
    let out = '';
    let done: Json;
    if (item.kind === 'message') {
      const part = { type: 'output_text', text: item.text, annotations: [] };
      out += this.event('response.output_text.done', { ...where, content_index: 0, text: item.text, logprobs: [] });
      out += this.event('response.content_part.done', { ...where, content_index: 0, part });
      done = { id: item.id, type: 'message', status: 'completed', role: 'assistant', content: [part] };
    } else if (item.kind === 'reasoning') {
      const part = { type: 'summary_text', text: item.text };
      out += this.event('response.reasoning_summary_text.done', { ...where, summary_index: 0, text: item.text });
      out += this.event('response.reasoning_summary_part.done', { ...where, summary_index: 0, part });
      done = { id: item.id, type: 'reasoning', summary: [part] };
    } else {
      const call = responsesCallItem(item.name, item.callId, item.arguments, this.context.responsesTools);
      if (item.custom) {
        // A free-form tool's text is inside the function form's JSON: sent whole, once the call is complete.
        const input = call.input as string;
        out += this.event('response.custom_tool_call_input.delta', { ...where, delta: input });
        out += this.event('response.custom_tool_call_input.done', { ...where, input });
      } else out += this.event('response.function_call_arguments.done', { ...where, arguments: item.arguments });
      done = { id: item.id, status: 'completed', ...call };
    }
    this.output[item.outputIndex] = done;
    return out + this.event('response.output_item.done', { output_index: item.outputIndex, item: done });
  }

  private openItem(item: OpenItem, added: Json): string {
    let out = this.start() + this.close();
    this.open = item;
    this.output[item.outputIndex] = added;
    out += this.event('response.output_item.added', { output_index: item.outputIndex, item: added });
    const where = { item_id: item.id, output_index: item.outputIndex };
    if (item.kind === 'message')
      out += this.event('response.content_part.added', {
        ...where,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
    if (item.kind === 'reasoning')
      out += this.event('response.reasoning_summary_part.added', { ...where, summary_index: 0, part: { type: 'summary_text', text: '' } });
    return out;
  }

  protected content(event: ContentEvent): string {
    switch (event.type) {
      case 'start':
        return this.start();
      case 'text': {
        let out = '';
        if (this.open?.kind !== 'message') {
          const id = derivedId('msg_', this.context.requestId, this.output.length);
          out += this.openItem(
            { kind: 'message', id, outputIndex: this.output.length, text: '' },
            { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
          );
        }
        const item = this.open as OpenItem & { kind: 'message' };
        item.text += event.text;
        return (
          out +
          this.event('response.output_text.delta', {
            item_id: item.id,
            output_index: item.outputIndex,
            content_index: 0,
            delta: event.text,
            logprobs: [],
          })
        );
      }
      case 'thinking': {
        let out = '';
        if (this.open?.kind !== 'reasoning') {
          const id = derivedId('rs_', this.context.requestId, this.output.length);
          out += this.openItem(
            { kind: 'reasoning', id, outputIndex: this.output.length, text: '' },
            { id, type: 'reasoning', summary: [] },
          );
        }
        const item = this.open as OpenItem & { kind: 'reasoning' };
        item.text += event.text;
        return (
          out +
          this.event('response.reasoning_summary_text.delta', {
            item_id: item.id,
            output_index: item.outputIndex,
            summary_index: 0,
            delta: event.text,
          })
        );
      }
      case 'tool_call_start': {
        const added = responsesCallItem(event.name, event.id, '', this.context.responsesTools);
        const custom = added.type === 'custom_tool_call';
        const id = derivedId(custom ? 'ctc_' : 'fc_', this.context.requestId, this.output.length);
        const item = {
          kind: 'call' as const,
          id,
          outputIndex: this.output.length,
          callId: event.id,
          name: event.name,
          arguments: '',
          source: event.index,
          custom,
        };
        this.calls.set(event.index, item);
        return this.openItem(item, { id, status: 'in_progress', ...added });
      }
      case 'tool_call_delta': {
        const item = this.calls.get(event.index);
        if (!item) return '';
        item.arguments += event.arguments;
        if (item.custom) return '';
        return this.event('response.function_call_arguments.delta', {
          item_id: item.id,
          output_index: item.outputIndex,
          delta: event.arguments,
        });
      }
      default:
        return '';
    }
  }

  protected closing(): string {
    const out = this.start() + this.close();
    const status = responsesStatus(this.stop ?? 'end_turn');
    const response = { ...this.envelope(), ...status, output: this.output, usage: responsesUsage(this.usage ?? { input: 0, output: 0 }) };
    return out + this.event(status.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  protected errorEvent(error: ErrorInfo): string {
    return this.event('error', { code: error.code, message: error.message, param: error.param ?? null });
  }
}

/** The in-stream error event of the Responses family, for a stream the gateway did not write (pass-through). */
export function responsesStreamError(error: ErrorInfo): string {
  return sseEvent({ type: 'error', code: error.code, message: error.message, param: error.param ?? null, sequence_number: 0 }, 'error');
}
