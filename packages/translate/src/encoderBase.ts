/**
 * @module encoderBase
 * What every family's stream encoder does the same way: collect usage and
 * the stop reason as they come (most families report them only at the
 * end), turn an upstream error into the family's error event, and make
 * sure a stream is ended exactly once, by its closing events or by an
 * error. A family writes only its content events, its closing events and
 * its error event.
 *
 * It also hands each tool call to the family whole, one after another: an
 * OpenAI upstream may interleave parallel calls' argument deltas (index 0,
 * then 1, then 0 again), but Anthropic's blocks, Responses' items and
 * Gemini's parts are written one call at a time. A call that starts while
 * another is streaming is held, with its arguments, and written complete
 * once the live call is over (the answer moves on to text or thinking, or
 * finishes). The first call still streams as it comes.
 */
import type { StreamEncoder } from './codec.js';
import type { ErrorInfo } from './errorShapes.js';
import { mergeUsage, type StopReason, type StreamEvent, type TokenUsage } from './ir.js';

/** Content events: everything but usage, finish, error and end. */
export type ContentEvent = Exclude<StreamEvent, { type: 'usage' | 'finish' | 'error' | 'end' }>;

type ToolCallStart = Extract<StreamEvent, { type: 'tool_call_start' }>;

/** The shared half of a stream encoder. */
export abstract class EncoderBase implements StreamEncoder {
  ended = false;
  protected usage: TokenUsage | undefined;
  protected stop: StopReason | undefined;
  protected stopSequence: string | undefined;
  /** Whether the family's stream addresses each call by index, so calls may interleave (OpenAI chat). */
  protected readonly interleavesCalls: boolean = false;
  /** The tool call (its upstream index) whose events go straight to the family. */
  private liveCall: number | undefined;
  /** Calls that started while another was live, in order, with the arguments seen so far. */
  private readonly heldCalls = new Map<number, { start: ToolCallStart; arguments: string }>();

  push(event: StreamEvent): string {
    if (this.ended) return '';
    switch (event.type) {
      case 'usage':
        this.usage = mergeUsage(this.usage, event.usage);
        return '';
      case 'tool_call_start':
        if (this.liveCall !== undefined && this.liveCall !== event.index && !this.interleavesCalls) {
          if (!this.heldCalls.has(event.index)) this.heldCalls.set(event.index, { start: event, arguments: '' });
          return '';
        }
        this.liveCall = event.index;
        return this.content(event);
      case 'tool_call_delta': {
        const held = this.heldCalls.get(event.index);
        if (held) {
          held.arguments += event.arguments;
          return '';
        }
        return this.content(event);
      }
      case 'text':
      case 'thinking':
        return this.releaseCalls() + this.content(event);
      case 'finish':
        return this.releaseCalls() + this.finish(event.stopReason, event.stopSequence);
      case 'error':
        return this.fail({
          status: event.status ?? 500,
          message: event.message,
          code: 'upstream_error',
          ...(event.errorType ? { type: event.errorType } : {}),
        });
      case 'end':
        return this.end();
      default:
        if (event.type === 'start' && event.usage) this.usage = mergeUsage(this.usage, event.usage);
        return this.content(event);
    }
  }

  end(): string {
    if (this.ended) return '';
    const out = this.releaseCalls() + this.closing();
    this.ended = true;
    return out;
  }

  /** The live call is over: writes the held calls, each whole. */
  private releaseCalls(): string {
    this.liveCall = undefined;
    if (this.heldCalls.size === 0) return '';
    let out = '';
    for (const { start, arguments: text } of this.heldCalls.values()) {
      out += this.content(start);
      if (text.length > 0) out += this.content({ type: 'tool_call_delta', index: start.index, arguments: text });
    }
    this.heldCalls.clear();
    return out;
  }

  fail(error: ErrorInfo): string {
    if (this.ended) return '';
    this.ended = true;
    return this.errorEvent(error);
  }

  /** Notes the stop reason (the first one counts); families that announce it at once override this. */
  protected finish(reason: StopReason, sequence: string | undefined): string {
    this.stop ??= reason;
    if (sequence !== undefined) this.stopSequence = sequence;
    return '';
  }

  /** SSE text for a content event. */
  protected abstract content(event: ContentEvent): string;
  /** SSE text that closes a finished stream. */
  protected abstract closing(): string;
  /** The family's in-stream error event. */
  protected abstract errorEvent(error: ErrorInfo): string;
}
