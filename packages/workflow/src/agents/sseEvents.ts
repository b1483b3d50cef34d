/**
 * @module sseEvents
 * Reads a server-sent event stream into events with `eventsource-parser`:
 * bytes are decoded as one UTF-8 stream (a character split across chunks
 * stays whole), line endings and multi-line `data:` follow the SSE rules, and
 * one event may not grow past a cap, so a peer that never ends an event
 * cannot make the reader buffer without bound.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { WorkflowError } from '../errors.js';

/** The default cap on one event (characters buffered for it, its `data:` lines together): 1 Mi. */
export const DEFAULT_MAX_EVENT_CHARS = 1024 * 1024;

/** Options of {@link readSseEvents}. */
export interface SseReadOptions {
  /** The most characters one event may take before it ends (default {@link DEFAULT_MAX_EVENT_CHARS}). */
  maxEventChars?: number;
  /** Names the stream in errors, e.g. `agent session http://127.0.0.1:3284/events`. */
  source?: string;
}

/**
 * The events of an SSE body, in order. Ends when the body ends; rejects with `upstream_failed`
 * when one event passes the cap (the body is left for the caller to destroy).
 *
 * @example
 * ```ts
 * for await (const event of readSseEvents(response.body, { maxEventChars: 65_536 })) {
 *   if (event.event === 'status_change') console.log(JSON.parse(event.data));
 * }
 * ```
 */
export async function* readSseEvents(
  body: AsyncIterable<Uint8Array | string>,
  options: SseReadOptions = {},
): AsyncGenerator<EventSourceMessage> {
  const max = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
  const ready: EventSourceMessage[] = [];
  let failure: WorkflowError | undefined;
  const tooLarge = (cause?: unknown) =>
    new WorkflowError('upstream_failed', `${options.source ?? 'an event stream'} sent an event over ${max} characters`, { cause });
  const parser = createParser({
    // The parser's own cap bounds what it buffers between chunks (an event that never ends);
    // the check in onEvent catches one that arrived whole within a chunk.
    maxBufferSize: max,
    onEvent: (event) => {
      if (failure) return;
      if (event.data.length > max) failure = tooLarge();
      else ready.push(event);
    },
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') failure ??= tooLarge(error);
      // A field the parser does not know, or a bad retry, is skipped as the SSE rules say.
    },
  });
  const decoder = new TextDecoder('utf-8');
  const drain = function* () {
    while (ready.length > 0) yield ready.shift()!;
  };
  for await (const chunk of body) {
    if (failure) break;
    parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    // Events finished before the one that overflowed still count.
    yield* drain();
    if (failure) throw failure;
  }
  if (!failure) parser.feed(decoder.decode());
  yield* drain();
  if (failure) throw failure;
}
