/**
 * @module anthropic/response
 * Anthropic Message objects in and out of the neutral model. Usage: the
 * neutral `input` counts every input token, so Anthropic's
 * `input_tokens` (which leaves out cache reads and writes) is the neutral
 * input minus both cache counts, and the reverse.
 */
import { derivedId } from '../common.js';
import { isObject, type Json, parseAnswerArguments } from '../fields.js';
import type { ChatResponse, EncodeContext, StopReason, TokenUsage } from '../ir.js';

const STOP_REASONS = new Set<string>(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal']);

/** The neutral stop reason of an Anthropic `stop_reason`. */
export function stopReasonFromAnthropic(reason: unknown): StopReason {
  if (reason === 'model_context_window_exceeded') return 'max_tokens';
  return typeof reason === 'string' && STOP_REASONS.has(reason) ? (reason as StopReason) : 'end_turn';
}

/** Anthropic's `stop_reason` for a neutral one. */
export function anthropicStopReason(reason: StopReason): string {
  if (reason === 'content_filter') return 'refusal';
  if (reason === 'error') return 'end_turn';
  return reason;
}

/** Neutral usage from an Anthropic `usage` object (fields it lacks stay absent). */
export function usageFromAnthropic(usage: unknown): Partial<TokenUsage> | undefined {
  if (!isObject(usage)) return undefined;
  const out: Partial<TokenUsage> = {};
  const read = typeof usage.cache_read_input_tokens === 'number' ? usage.cache_read_input_tokens : undefined;
  const write = typeof usage.cache_creation_input_tokens === 'number' ? usage.cache_creation_input_tokens : undefined;
  if (typeof usage.input_tokens === 'number') out.input = usage.input_tokens + (read ?? 0) + (write ?? 0);
  if (typeof usage.output_tokens === 'number') out.output = usage.output_tokens;
  if (read !== undefined) out.cacheRead = read;
  if (write !== undefined) out.cacheWrite = write;
  return out;
}

/** An Anthropic `usage` object. */
export function anthropicUsage(usage: Partial<TokenUsage>): Json {
  const read = usage.cacheRead ?? 0;
  const write = usage.cacheWrite ?? 0;
  const out: Json = { input_tokens: Math.max(0, (usage.input ?? 0) - read - write), output_tokens: usage.output ?? 0 };
  if (usage.cacheWrite !== undefined) out.cache_creation_input_tokens = usage.cacheWrite;
  if (usage.cacheRead !== undefined) out.cache_read_input_tokens = usage.cacheRead;
  return out;
}

/** Reads a Message. */
export function decodeMessagesResponse(json: unknown): ChatResponse {
  const body = isObject(json) ? json : {};
  const parts: ChatResponse['parts'] = [];
  for (const block of Array.isArray(body.content) ? body.content : []) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') parts.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use')
      parts.push({
        type: 'tool_call',
        id: String(block.id ?? ''),
        name: String(block.name ?? ''),
        arguments: JSON.stringify(block.input ?? {}),
      });
    else if (block.type === 'thinking')
      parts.push({
        type: 'thinking',
        text: String(block.thinking ?? ''),
        ...(typeof block.signature === 'string' ? { signature: block.signature } : {}),
      });
    else if (block.type === 'redacted_thinking') parts.push({ type: 'thinking', text: '', redacted: String(block.data ?? '') });
  }
  const usage = usageFromAnthropic(body.usage);
  const response: ChatResponse = {
    id: String(body.id ?? ''),
    model: String(body.model ?? ''),
    parts,
    stopReason: stopReasonFromAnthropic(body.stop_reason),
    usage: { input: usage?.input ?? 0, output: usage?.output ?? 0, ...usage },
  };
  if (typeof body.stop_sequence === 'string') response.stopSequence = body.stop_sequence;
  return response;
}

/** Writes a Message. */
export function encodeMessagesResponse(response: ChatResponse, context: EncodeContext): Json {
  const content: Json[] = [];
  for (const part of response.parts) {
    if (part.type === 'text') content.push({ type: 'text', text: part.text });
    else if (part.type === 'thinking')
      content.push(
        part.redacted !== undefined
          ? { type: 'redacted_thinking', data: part.redacted }
          : { type: 'thinking', thinking: part.text, signature: part.signature ?? '' },
      );
    else if (part.type === 'tool_call')
      content.push({ type: 'tool_use', id: part.id, name: part.name, input: parseAnswerArguments(part.arguments, part.name) });
  }
  return {
    id: response.id.startsWith('msg_') ? response.id : derivedId('msg_', context.requestId),
    type: 'message',
    role: 'assistant',
    model: context.model,
    content,
    stop_reason: anthropicStopReason(response.stopReason),
    stop_sequence: response.stopSequence ?? null,
    usage: anthropicUsage(response.usage),
  };
}
