/**
 * @module responses/response
 * OpenAI Response objects in and out of the neutral model: `output` items
 * (`reasoning` summaries, `message` with `output_text`, `function_call`),
 * `status` with `incomplete_details` as the stop reason (tool use is implied
 * by function calls), and usage with cached and reasoning details.
 */
import { derivedId } from '../common.js';
import { isObject, type Json } from '../fields.js';
import type { ChatResponse, EncodeContext, ResponsesToolNames, StopReason, TokenUsage } from '../ir.js';
import { flatToolName, responsesCallItem } from './request.js';

/** Neutral usage from a Responses `usage` object. */
export function usageFromResponses(usage: unknown): Partial<TokenUsage> | undefined {
  if (!isObject(usage)) return undefined;
  const out: Partial<TokenUsage> = {};
  if (typeof usage.input_tokens === 'number') out.input = usage.input_tokens;
  if (typeof usage.output_tokens === 'number') out.output = usage.output_tokens;
  const cached = isObject(usage.input_tokens_details) ? usage.input_tokens_details.cached_tokens : undefined;
  if (typeof cached === 'number') out.cacheRead = cached;
  const reasoning = isObject(usage.output_tokens_details) ? usage.output_tokens_details.reasoning_tokens : undefined;
  if (typeof reasoning === 'number') out.reasoning = reasoning;
  return out;
}

/** A Responses `usage` object. */
export function responsesUsage(usage: Partial<TokenUsage>): Json {
  const input = usage.input ?? 0;
  const output = usage.output ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheRead ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
    total_tokens: input + output,
  };
}

/** The neutral stop reason of a response's status. */
export function stopReasonFromResponses(response: Json, calledTools: boolean): StopReason {
  if (response.status === 'incomplete') {
    const reason = isObject(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    return reason === 'content_filter' ? 'content_filter' : 'max_tokens';
  }
  if (response.status === 'failed') return 'error';
  return calledTools ? 'tool_use' : 'end_turn';
}

/** `status` and `incomplete_details` for a neutral stop reason. */
export function responsesStatus(reason: StopReason): { status: string; incomplete_details: Json | null } {
  if (reason === 'max_tokens') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (reason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** Reads a Response. */
export function decodeResponsesResponse(json: unknown): ChatResponse {
  const body = isObject(json) ? json : {};
  const parts: ChatResponse['parts'] = [];
  let calls = 0;
  for (const item of Array.isArray(body.output) ? body.output : []) {
    if (!isObject(item)) continue;
    if (item.type === 'reasoning') {
      const summary = Array.isArray(item.summary) ? item.summary : [];
      const text = summary.map((s) => (isObject(s) && typeof s.text === 'string' ? s.text : '')).join('\n\n');
      if (text) parts.push({ type: 'thinking', text });
    } else if (item.type === 'message') {
      for (const content of Array.isArray(item.content) ? item.content : []) {
        if (!isObject(content)) continue;
        if (content.type === 'output_text' && typeof content.text === 'string') parts.push({ type: 'text', text: content.text });
        else if (content.type === 'refusal' && typeof content.refusal === 'string') parts.push({ type: 'text', text: content.refusal });
      }
    } else if (item.type === 'function_call') {
      calls++;
      parts.push({
        type: 'tool_call',
        id: String(item.call_id ?? item.id ?? ''),
        name: callName(item),
        arguments: String(item.arguments ?? ''),
      });
    }
  }
  const usage = usageFromResponses(body.usage);
  const response: ChatResponse = {
    id: String(body.id ?? ''),
    model: String(body.model ?? ''),
    parts,
    stopReason: stopReasonFromResponses(body, calls > 0),
    usage: { input: usage?.input ?? 0, output: usage?.output ?? 0, ...usage },
  };
  if (typeof body.created_at === 'number') response.created = body.created_at;
  return response;
}

/** A `function_call` item's name in the neutral model: flat when it names a namespace. */
export function callName(item: Json): string {
  const name = String(item.name ?? '');
  return typeof item.namespace === 'string' ? flatToolName(item.namespace, name) : name;
}

/** One `output` item per run of text, per reasoning summary, per call. */
export function responsesOutput(parts: ChatResponse['parts'], requestId: string, namespaces?: ResponsesToolNames): Json[] {
  const output: Json[] = [];
  let text: string | undefined;
  const flushText = () => {
    if (text === undefined) return;
    output.push({
      id: derivedId('msg_', requestId, output.length),
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [] }],
    });
    text = undefined;
  };
  for (const part of parts) {
    if (part.type === 'text') text = (text ?? '') + part.text;
    else if (part.type === 'thinking') {
      flushText();
      output.push({
        id: derivedId('rs_', requestId, output.length),
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: part.text }],
      });
    } else {
      flushText();
      const item = responsesCallItem(part.name, part.id, part.arguments, namespaces);
      const prefix = item.type === 'custom_tool_call' ? 'ctc_' : 'fc_';
      output.push({ id: derivedId(prefix, requestId, output.length), status: 'completed', ...item });
    }
  }
  flushText();
  return output;
}

/** The fields every Response object carries, for a given state. */
export function responseEnvelope(id: string, context: EncodeContext, createdAt: number): Json {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: context.model,
    output: [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: null,
    metadata: {},
  };
}

/** Writes a Response. */
export function encodeResponsesResponse(response: ChatResponse, context: EncodeContext): Json {
  const id = response.id.startsWith('resp_') ? response.id : derivedId('resp_', context.requestId);
  return {
    ...responseEnvelope(id, context, response.created ?? Math.floor(context.now / 1000)),
    ...responsesStatus(response.stopReason),
    output: responsesOutput(response.parts, context.requestId, context.responsesTools),
    usage: responsesUsage(response.usage),
  };
}
