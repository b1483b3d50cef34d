/**
 * @module streamOpening
 * Which stream events only open a stream: they announce it or keep it
 * alive and carry no part of the answer. Anthropic's `message_start` and
 * `ping`, Responses' `response.created` and `response.in_progress`, SSE
 * comments and, in a translated stream, the OpenAI chat chunk that only
 * names the assistant's role (what an upstream's start event becomes).
 *
 * The attempt holds such events back until the first event that carries
 * the answer, so that an upstream that opens its stream and then sends an
 * error (a rate limit, an overload), even in a later chunk, has still sent
 * the client nothing, and the request can go to another provider. Only the
 * chunks before the client's first byte are looked at, and a pass-through
 * chunk is parsed only when it holds one of the markers below: a stream
 * in flight pays nothing for this, and a chat stream's first chunk next to
 * nothing.
 *
 * A passed-through OpenAI chat role chunk is not held: it is what
 * OpenAI-style servers send first (their rate limits and overloads come as
 * HTTP statuses, before it), and clients' time to first byte is measured
 * on it.
 */
import { isObject, type Json } from '@switchyard/translate/wire';
import { EVENT_SEPARATOR, eventData } from './sse.js';

/** Event types (Anthropic, Responses) that open a stream or keep it alive. */
const OPENING_TYPES = new Set(['message_start', 'ping', 'response.created', 'response.in_progress']);
/** Bytes one of which an opening event holds (a comment's colon starts a line). */
const MARKERS = [...OPENING_TYPES, '\n:'].map((marker) => Buffer.from(marker));
const COLON = 0x3a;

/** What may count as opening besides the events every family shares. */
export interface StreamOpeningOptions {
  /**
   * An OpenAI chat chunk that only names the role (empty content, no finish reason, no usage):
   * a translated stream's rendering of its upstream's start event.
   */
  roleChunks?: boolean;
}

/** A chat delta that says nothing but who speaks (`role`; any other field empty or null). */
function isRoleOnly(delta: unknown): boolean {
  if (!isObject(delta)) return false;
  for (const [key, value] of Object.entries(delta)) if (key !== 'role' && value !== null && value !== '') return false;
  return true;
}

/** An OpenAI chat chunk with no part of the answer: every choice role-only and unfinished, no usage, no error. */
function isRoleChunk(chunk: Json): boolean {
  if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) return false;
  if (chunk.error !== undefined || (chunk.usage !== undefined && chunk.usage !== null)) return false;
  return chunk.choices.every((choice) => isObject(choice) && (choice.finish_reason ?? null) === null && isRoleOnly(choice.delta));
}

function isOpeningEvent(event: string, options: StreamOpeningOptions): boolean {
  const data = eventData(event);
  // No data (a comment, a bare `event:` line): nothing a client reads.
  if (data.length === 0) return true;
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    // `[DONE]`, or something else the client should see as it came.
    return false;
  }
  if (!isObject(json)) return false;
  if (typeof json.type === 'string') return OPENING_TYPES.has(json.type);
  return options.roleChunks === true && isRoleChunk(json);
}

/**
 * Whether the bytes a stream tap returned (whole SSE events, in the client's
 * family) only open the stream, so that holding them back delays no part of
 * the answer and keeps the attempt retryable.
 *
 * @example
 * ```ts
 * isStreamOpening('event: ping\ndata: {"type":"ping"}\n\n'); // true
 * isStreamOpening(': keep-alive\n\n'); // true
 * isStreamOpening('data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n', { roleChunks: true }); // true
 * isStreamOpening('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n', { roleChunks: true }); // false
 * ```
 */
export function isStreamOpening(out: Uint8Array | string, options: StreamOpeningOptions = {}): boolean {
  let text: string;
  if (typeof out === 'string') text = out;
  else {
    const bytes = Buffer.isBuffer(out) ? out : Buffer.from(out.buffer, out.byteOffset, out.byteLength);
    // Most streams' first chunk is already their answer: tell without decoding it.
    if (!options.roleChunks && bytes[0] !== COLON && !MARKERS.some((marker) => bytes.includes(marker))) return false;
    text = bytes.toString('utf8');
  }
  for (const event of text.split(EVENT_SEPARATOR)) if (event.length > 0 && !isOpeningEvent(event, options)) return false;
  return true;
}
