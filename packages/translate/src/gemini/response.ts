/**
 * @module gemini/response
 * `GenerateContentResponse` objects in and out of the neutral model: the
 * first candidate's parts, `finishReason` (Gemini has no "tool use" reason:
 * a `STOP` with function calls is one), `promptFeedback.blockReason`, and
 * `usageMetadata` (`candidatesTokenCount` leaves out thoughts, which the
 * neutral `output` includes).
 */
import { isObject, type Json, parseAnswerArguments } from '../fields.js';
import type { ChatResponse, EncodeContext, StopReason, TokenUsage } from '../ir.js';
import { member } from './request.js';

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE']);

/** The neutral stop reason of a Gemini `finishReason`. */
export function stopReasonFromGemini(reason: unknown, calledTools: boolean): StopReason {
  if (reason === 'MAX_TOKENS') return 'max_tokens';
  if (typeof reason === 'string' && FILTERED.has(reason)) return 'content_filter';
  if (reason === 'MALFORMED_FUNCTION_CALL' || reason === 'UNEXPECTED_TOOL_CALL') return 'error';
  return calledTools ? 'tool_use' : 'end_turn';
}

/** Gemini's `finishReason` for a neutral stop reason. */
export function geminiFinishReason(reason: StopReason): string {
  if (reason === 'max_tokens') return 'MAX_TOKENS';
  if (reason === 'content_filter' || reason === 'refusal') return 'SAFETY';
  if (reason === 'error') return 'OTHER';
  return 'STOP';
}

/** Neutral usage from `usageMetadata`. */
export function usageFromGemini(metadata: unknown): Partial<TokenUsage> | undefined {
  if (!isObject(metadata)) return undefined;
  const number = (name: string) => {
    const value = member(metadata, name);
    return typeof value === 'number' ? value : undefined;
  };
  const prompt = number('promptTokenCount');
  const candidates = number('candidatesTokenCount');
  const thoughts = number('thoughtsTokenCount');
  const cached = number('cachedContentTokenCount');
  const out: Partial<TokenUsage> = {};
  if (prompt !== undefined) out.input = prompt + (number('toolUsePromptTokenCount') ?? 0);
  if (candidates !== undefined || thoughts !== undefined) out.output = (candidates ?? 0) + (thoughts ?? 0);
  if (thoughts !== undefined) out.reasoning = thoughts;
  if (cached !== undefined) out.cacheRead = cached;
  return out;
}

/** A Gemini `usageMetadata` object. */
export function geminiUsage(usage: Partial<TokenUsage>): Json {
  const input = usage.input ?? 0;
  const output = usage.output ?? 0;
  const out: Json = { promptTokenCount: input, candidatesTokenCount: output - (usage.reasoning ?? 0), totalTokenCount: input + output };
  if (usage.reasoning !== undefined) out.thoughtsTokenCount = usage.reasoning;
  if (usage.cacheRead !== undefined) out.cachedContentTokenCount = usage.cacheRead;
  return out;
}

/** Reads a `GenerateContentResponse`. */
export function decodeGenerateContentResponse(json: unknown): ChatResponse {
  const body = isObject(json) ? json : {};
  const candidate = Array.isArray(body.candidates) && isObject(body.candidates[0]) ? body.candidates[0] : {};
  const content = isObject(candidate.content) ? candidate.content : {};
  const parts: ChatResponse['parts'] = [];
  let calls = 0;
  for (const part of Array.isArray(content.parts) ? content.parts : []) {
    if (!isObject(part)) continue;
    const signature = member(part, 'thoughtSignature');
    const signed = typeof signature === 'string' ? { signature } : {};
    const call = member(part, 'functionCall');
    if (typeof part.text === 'string') {
      if (part.thought === true) parts.push({ type: 'thinking', text: part.text, ...signed });
      else if (part.text.length > 0) parts.push({ type: 'text', text: part.text });
    } else if (isObject(call)) {
      parts.push({
        type: 'tool_call',
        id: typeof call.id === 'string' ? call.id : `call_${calls}`,
        name: String(call.name ?? ''),
        arguments: JSON.stringify(call.args ?? {}),
        ...signed,
      });
      calls++;
    }
  }
  const usage = usageFromGemini(member(body, 'usageMetadata'));
  const feedback = member(body, 'promptFeedback');
  const blocked = isObject(feedback) && member(feedback, 'blockReason') !== undefined;
  const response: ChatResponse = {
    id: String(member(body, 'responseId') ?? ''),
    model: String(member(body, 'modelVersion') ?? ''),
    parts,
    stopReason: blocked ? 'content_filter' : stopReasonFromGemini(member(candidate, 'finishReason'), calls > 0),
    usage: { input: usage?.input ?? 0, output: usage?.output ?? 0, ...usage },
  };
  return response;
}

/** The `parts` of a model turn. */
export function geminiParts(parts: ChatResponse['parts']): Json[] {
  return parts.map((part) => {
    if (part.type === 'text') return { text: part.text };
    if (part.type === 'thinking')
      return part.signature ? { text: part.text, thought: true, thoughtSignature: part.signature } : { text: part.text, thought: true };
    const call: Json = { functionCall: { id: part.id, name: part.name, args: parseAnswerArguments(part.arguments, part.name) } };
    if (part.signature) call.thoughtSignature = part.signature;
    return call;
  });
}

/** Writes a `GenerateContentResponse`. */
export function encodeGenerateContentResponse(response: ChatResponse, context: EncodeContext): Json {
  const parts = geminiParts(response.parts);
  return {
    candidates: [
      {
        content: { role: 'model', parts: parts.length > 0 ? parts : [{ text: '' }] },
        finishReason: geminiFinishReason(response.stopReason),
        index: 0,
      },
    ],
    usageMetadata: geminiUsage(response.usage),
    modelVersion: context.model,
    responseId: response.id || context.requestId,
  };
}
