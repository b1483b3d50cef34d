/**
 * @module common
 * Mappings more than one family shares: reasoning effort against token
 * budgets, and the conversation clean-ups that Anthropic and Gemini both
 * need (consecutive turns of one role merged, tool names found from ids).
 */
import type { DecodeContext } from './codec.js';
import { invalid, optionalInteger, optionalNumber, unsupported } from './fields.js';
import type {
  ChatRequest,
  ImagePart,
  Message,
  Part,
  ReasoningEffort,
  ReasoningSettings,
  SettingKey,
  TextPart,
  ToolCallPart,
  ToolResultPart,
} from './ir.js';

/**
 * Token budgets for OpenAI's effort levels, and back. The thresholds sit
 * between the budgets, so effort → budget → effort is the identity for
 * `low`, `medium` and `high` (`minimal` has no budget of its own: Anthropic's
 * smallest budget is 1,024 tokens, the same as `low`).
 */
export const EFFORT_BUDGETS: Readonly<Record<ReasoningEffort, number>> = { minimal: 1024, low: 1024, medium: 8192, high: 24576 };

/** The effort level a token budget corresponds to. */
export function effortOfBudget(budget: number): ReasoningEffort {
  if (budget < 4096) return 'low';
  if (budget < 16384) return 'medium';
  return 'high';
}

/** A budget for the settings: the explicit one, else the effort's. */
export function budgetOf(reasoning: ReasoningSettings | undefined): number | undefined {
  if (!reasoning) return undefined;
  if (reasoning.budgetTokens !== undefined) return reasoning.budgetTokens;
  return reasoning.effort ? EFFORT_BUDGETS[reasoning.effort] : undefined;
}

/** An effort for the settings: the explicit one, else the budget's. */
export function effortOf(reasoning: ReasoningSettings | undefined): ReasoningEffort | undefined {
  if (!reasoning) return undefined;
  if (reasoning.effort) return reasoning.effort;
  return reasoning.budgetTokens !== undefined && reasoning.budgetTokens > 0 ? effortOfBudget(reasoning.budgetTokens) : undefined;
}

/**
 * Joins consecutive messages of one role. Anthropic wants every tool result
 * answering one assistant turn in the single user turn after it, and Gemini
 * wants turns to alternate; OpenAI sends one `tool` message per result.
 */
export function mergeConsecutiveTurns(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const message of messages) {
    const last = out.at(-1);
    if (last && last.role === message.role) {
      // Tool results go first in a user turn, as Anthropic requires.
      const results = message.parts.filter((p) => p.type === 'tool_result');
      const others = message.parts.filter((p) => p.type !== 'tool_result');
      if (last.role === 'user' && results.length > 0) {
        const lastResults = last.parts.filter((p) => p.type === 'tool_result');
        const lastOthers = last.parts.filter((p) => p.type !== 'tool_result');
        last.parts = [...lastResults, ...results, ...lastOthers, ...others];
      } else {
        last.parts = [...last.parts, ...message.parts];
      }
    } else {
      out.push({ ...message, parts: [...message.parts] });
    }
  }
  return out;
}

/** Whether a text says nothing (empty or only whitespace): Anthropic refuses such text blocks, Gemini empty text parts. */
export function isBlank(text: string): boolean {
  return text.trim().length === 0;
}

/**
 * The turns to send to a family that refuses an empty one (Anthropic: "all
 * messages must have non-empty content"; Gemini: "contents.parts must not be
 * empty"), merged as {@link mergeConsecutiveTurns} does. Blank text and the
 * parts the family does not take (`sends` is false) are left out first. Then
 * an assistant turn left with nothing is dropped and reported in
 * `request.dropped`: it said nothing, so the answer is the same without it.
 * A user turn left with nothing (once merged with its neighbours) is refused
 * with `invalid_request` naming the client's field: without it the
 * conversation would end on the model's own turn, or be empty, and the model
 * would answer something the client did not ask.
 */
export function sendableTurns(request: ChatRequest, sends: (part: Part) => boolean): Message[] {
  const kept: Message[] = [];
  request.messages.forEach((message, i) => {
    const parts = message.parts.filter((part) => (part.type !== 'text' || !isBlank(part.text)) && sends(part));
    if (parts.length === 0 && message.role === 'assistant') request.dropped.push(message.path ?? `messages[${i}]`);
    else kept.push({ ...message, parts });
  });
  const turns = mergeConsecutiveTurns(kept);
  for (const turn of turns)
    if (turn.parts.length === 0)
      invalid(turn.path ?? 'messages', 'is empty: the provider refuses a turn with no content (send some text, or leave the turn out)');
  return turns;
}

/**
 * A tool result's content, its images marked with where they sit in the
 * client's body. `parts` must be decoded one for one from the client's array
 * at `path` (as the chat and Responses decoders do), so that index `k` is
 * the client's `path[k]`: a target that drops an image names the client's
 * field without walking the body again.
 */
export function resultContentAt(parts: readonly Part[], path: string): (TextPart | ImagePart)[] {
  const content: (TextPart | ImagePart)[] = [];
  parts.forEach((part, k) => {
    if (part.type === 'image') content.push({ ...part, path: `${path}[${k}]` });
    else if (part.type === 'text') content.push(part);
  });
  return content;
}

/**
 * Reports a tool result's images as dropped, each by the client's own path,
 * for a target whose tool results hold only text. `fallback` (an index into
 * the neutral messages) names only images the gateway made up itself.
 */
export function dropResultImages(request: ChatRequest, part: ToolResultPart, fallback: string): void {
  for (const item of part.content) if (item.type === 'image') request.dropped.push(item.path ?? `${fallback}.tool_result.image`);
}

/** Reports a tool result's error flag as dropped, by the client's own field, for a target that cannot mark a failure. */
export function dropResultError(request: ChatRequest, part: ToolResultPart, fallback: string): void {
  if (part.isError) request.dropped.push(part.errorPath ?? `${fallback}.tool_result.is_error`);
}

/** Notes where a setting sits in the client's body, for {@link dropSetting}. */
export function noteSettingPath(request: ChatRequest, key: SettingKey, path: string): void {
  (request.settingPaths ??= {})[key] = path;
}

/**
 * Reports a setting the target has no place for, by the client's own field;
 * `field` (OpenAI's name) only for a setting the gateway set itself.
 */
export function dropSetting(request: ChatRequest, key: SettingKey, field: string): void {
  request.dropped.push(request.settingPaths?.[key] ?? field);
}

/**
 * Reports each of `settings` ([key, OpenAI's name]) that the request has
 * and the target cannot carry.
 */
export function dropSettings(request: ChatRequest, settings: readonly (readonly [SettingKey, string])[]): void {
  for (const [key, field] of settings) if (request[key] !== undefined) dropSetting(request, key, field);
}

/** Tool names by call id, from every assistant turn (Gemini answers results by name). */
export function toolNamesById(messages: readonly Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages)
    for (const part of message.parts) if (part.type === 'tool_call') names.set((part as ToolCallPart).id, (part as ToolCallPart).name);
  return names;
}

/** A short random-looking id, stable for a request (ids derive from the request id, not from a RNG, so tests can pin them). */
export function derivedId(prefix: string, requestId: string, suffix?: string | number): string {
  const clean = requestId.replace(/[^A-Za-z0-9]/g, '').slice(0, 32) || 'switchyard';
  return suffix === undefined ? `${prefix}${clean}` : `${prefix}${clean}_${suffix}`;
}

/** The neutral request's numeric settings. */
export type NumericSetting = 'maxTokens' | 'temperature' | 'topP' | 'topK' | 'seed' | 'presencePenalty' | 'frequencyPenalty' | 'candidates';

/** Settings that must be whole numbers. */
const INTEGER_SETTINGS = new Set<NumericSetting>(['maxTokens', 'topK', 'seed', 'candidates']);

/**
 * Reads optional numeric settings into a request: each entry is the
 * setting, the body's value and its path (for the error naming it).
 */
export function readNumericSettings(request: ChatRequest, entries: readonly (readonly [NumericSetting, unknown, string])[]): void {
  for (const [key, value, path] of entries) {
    const number = INTEGER_SETTINGS.has(key) ? optionalInteger(value, path) : optionalNumber(value, path);
    if (number === undefined) continue;
    request[key] = number;
    noteSettingPath(request, key, path);
  }
}

/**
 * A hosted tool (one only the client's own provider runs) under
 * `context.hostedTools`: `refuse` throws `unsupported_translation` naming
 * `refusedAt` (the tool's type field); `drop` (the default) names `path` in
 * `request.dropped`, and the conversation goes on without the tool.
 */
export function hostedTool(request: ChatRequest, context: DecodeContext, path: string, message: string, refusedAt = `${path}.type`): void {
  if ((context.hostedTools ?? 'drop') === 'refuse') unsupported(refusedAt, message);
  request.dropped.push(path);
}
