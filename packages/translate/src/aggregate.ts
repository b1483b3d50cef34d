/**
 * @module aggregate
 * Builds a complete answer from neutral stream events: for providers that
 * only stream (their answer to a non-streaming client is collected first),
 * and for tests that read a translated stream back.
 */
import { type ChatResponse, mergeUsage, type StreamEvent, type TokenUsage } from './ir.js';

/**
 * Collects stream events into one response.
 *
 * @example
 * ```ts
 * const response = aggregateStream(events); // { parts: [{ type: 'text', text: 'Hello' }], stopReason: 'end_turn', … }
 * ```
 */
export function aggregateStream(events: Iterable<StreamEvent>): ChatResponse {
  const response: ChatResponse = { id: '', model: '', parts: [], stopReason: 'end_turn', usage: { input: 0, output: 0 } };
  let usage: TokenUsage | undefined;
  const calls = new Map<number, Extract<ChatResponse['parts'][number], { type: 'tool_call' }>>();
  const last = () => response.parts.at(-1);
  for (const event of events) {
    switch (event.type) {
      case 'start':
        if (event.id) response.id = event.id;
        if (event.model) response.model = event.model;
        if (event.usage) usage = mergeUsage(usage, event.usage);
        break;
      case 'text': {
        const part = last();
        if (part?.type === 'text') part.text += event.text;
        else response.parts.push({ type: 'text', text: event.text });
        break;
      }
      case 'thinking': {
        const part = last();
        if (part?.type === 'thinking') part.text += event.text;
        else response.parts.push({ type: 'thinking', text: event.text });
        break;
      }
      case 'thinking_signature': {
        const part = last();
        if (part?.type === 'thinking') part.signature = event.signature;
        break;
      }
      case 'tool_call_start': {
        const call = {
          type: 'tool_call' as const,
          id: event.id,
          name: event.name,
          arguments: '',
          ...(event.signature ? { signature: event.signature } : {}),
        };
        calls.set(event.index, call);
        response.parts.push(call);
        break;
      }
      case 'tool_call_delta': {
        const call = calls.get(event.index);
        if (call) call.arguments += event.arguments;
        break;
      }
      case 'usage':
        usage = mergeUsage(usage, event.usage);
        break;
      case 'finish':
        response.stopReason = event.stopReason;
        if (event.stopSequence !== undefined) response.stopSequence = event.stopSequence;
        break;
      case 'error':
        throw Object.assign(new Error(event.message), { code: event.errorType ?? 'upstream_error', status: event.status });
      default:
        break;
    }
  }
  if (usage) response.usage = usage;
  return response;
}
