/**
 * @module encoderBase
 * What every family's stream encoder does the same way: collect usage and
 * the stop reason as they come (most families report them only at the
 * end), turn an upstream error into the family's error event, and make
 * sure a stream is ended exactly once, by its closing events or by an
 * error. A family writes only its content events, its closing events and
 * its error event.
 */
import type { StreamEncoder } from './codec.js';
import type { ErrorInfo } from './errorShapes.js';
import { mergeUsage, type StopReason, type StreamEvent, type TokenUsage } from './ir.js';

/** Content events: everything but usage, finish, error and end. */
export type ContentEvent = Exclude<StreamEvent, { type: 'usage' | 'finish' | 'error' | 'end' }>;

/** The shared half of a stream encoder. */
export abstract class EncoderBase implements StreamEncoder {
  ended = false;
  protected usage: TokenUsage | undefined;
  protected stop: StopReason | undefined;
  protected stopSequence: string | undefined;

  push(event: StreamEvent): string {
    if (this.ended) return '';
    switch (event.type) {
      case 'usage':
        this.usage = mergeUsage(this.usage, event.usage);
        return '';
      case 'finish':
        return this.finish(event.stopReason, event.stopSequence);
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
    const out = this.closing();
    this.ended = true;
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
