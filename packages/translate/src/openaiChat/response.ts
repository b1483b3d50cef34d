/**
 * @module openaiChat/response
 * OpenAI chat completion objects in and out of the neutral model: the first
 * choice's text, tool calls and reasoning (`reasoning_content`, the field
 * OpenAI-compatible reasoning servers use), `finish_reason`, and usage with
 * cached and reasoning token details.
 */
import { isObject, type Json } from '../fields.js';
import type { ChatResponse, EncodeContext, StopReason, TokenUsage } from '../ir.js';

const FROM_FINISH: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'content_filter',
};

/**
 * The neutral stop reason of an OpenAI `finish_reason`. Some
 * OpenAI-compatible servers finish a turn of tool calls with `stop`: with
 * calls made, that is a tool-use stop (Anthropic clients run the tools only
 * on `tool_use`), as Gemini's and Responses' answers are read too.
 */
export function stopReasonFromOpenAi(reason: unknown, calledTools = false): StopReason {
  const stop = (typeof reason === 'string' && FROM_FINISH[reason]) || 'end_turn';
  return stop === 'end_turn' && calledTools ? 'tool_use' : stop;
}

/** OpenAI's `finish_reason` for a neutral stop reason. */
export function openAiFinishReason(reason: StopReason): string {
  switch (reason) {
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'content_filter':
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Usage from an OpenAI chat `usage` object. */
export function usageFromOpenAiChat(usage: unknown): Partial<TokenUsage> | undefined {
  if (!isObject(usage)) return undefined;
  const out: Partial<TokenUsage> = {};
  if (typeof usage.prompt_tokens === 'number') out.input = usage.prompt_tokens;
  if (typeof usage.completion_tokens === 'number') out.output = usage.completion_tokens;
  const cached = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details.cached_tokens : undefined;
  if (typeof cached === 'number') out.cacheRead = cached;
  const reasoning = isObject(usage.completion_tokens_details) ? usage.completion_tokens_details.reasoning_tokens : undefined;
  if (typeof reasoning === 'number') out.reasoning = reasoning;
  return out;
}

/** An OpenAI chat `usage` object. */
export function openAiChatUsage(usage: TokenUsage): Json {
  const out: Json = { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output };
  if (usage.cacheRead !== undefined) out.prompt_tokens_details = { cached_tokens: usage.cacheRead };
  if (usage.reasoning !== undefined) out.completion_tokens_details = { reasoning_tokens: usage.reasoning };
  return out;
}

/** Reads a chat completion. */
export function decodeChatResponse(json: unknown): ChatResponse {
  const body = isObject(json) ? json : {};
  const choice = Array.isArray(body.choices) && isObject(body.choices[0]) ? body.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const parts: ChatResponse['parts'] = [];
  const reasoning = message.reasoning_content ?? message.reasoning;
  if (typeof reasoning === 'string' && reasoning.length > 0) parts.push({ type: 'thinking', text: reasoning });
  if (typeof message.content === 'string' && message.content.length > 0) parts.push({ type: 'text', text: message.content });
  if (typeof message.refusal === 'string' && message.refusal.length > 0) parts.push({ type: 'text', text: message.refusal });
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isObject(call) || !isObject(call.function)) continue;
      parts.push({
        type: 'tool_call',
        id: String(call.id ?? ''),
        name: String(call.function.name ?? ''),
        arguments: typeof call.function.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function.arguments ?? {}),
      });
    }
  }
  const usage = usageFromOpenAiChat(body.usage);
  const response: ChatResponse = {
    id: String(body.id ?? ''),
    model: String(body.model ?? ''),
    parts,
    stopReason:
      typeof message.refusal === 'string' && message.refusal
        ? 'refusal'
        : stopReasonFromOpenAi(
            choice.finish_reason,
            parts.some((p) => p.type === 'tool_call'),
          ),
    usage: { input: usage?.input ?? 0, output: usage?.output ?? 0, ...usage },
  };
  if (typeof body.created === 'number') response.created = body.created;
  return response;
}

/** Writes a chat completion. */
export function encodeChatResponse(response: ChatResponse, context: EncodeContext): Json {
  const text = response.parts
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('');
  const reasoning = response.parts
    .filter((p) => p.type === 'thinking')
    .map((p) => p.text)
    .join('');
  const calls = response.parts.filter((p) => p.type === 'tool_call');
  const message: Json = { role: 'assistant', content: text.length > 0 || calls.length === 0 ? text : null, refusal: null };
  if (reasoning.length > 0) message.reasoning_content = reasoning;
  if (calls.length > 0)
    message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return {
    id: response.id || `chatcmpl-${context.requestId}`,
    object: 'chat.completion',
    created: response.created ?? Math.floor(context.now / 1000),
    model: context.model,
    choices: [{ index: 0, message, finish_reason: openAiFinishReason(response.stopReason), logprobs: null }],
    usage: openAiChatUsage(response.usage),
  };
}
