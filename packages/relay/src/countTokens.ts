/**
 * @module countTokens
 * Token counting (`POST /v1/messages/count_tokens`, Gemini's
 * `:countTokens`): the request body each family sends, the answer each
 * family expects, and an estimate for providers that cannot count (OpenAI
 * has no counting endpoint for chat). An estimate is marked as one with the
 * `x-switchyard-token-count: estimate` header.
 */

import type { ChatRequest } from '@switchyard/translate';
import { isObject, type Json } from '@switchyard/translate/wire';
import type { ApiFamily } from './types.js';

/** The generate-style body inside a count request (Gemini may wrap it in `generateContentRequest`). */
export function countTokensBody(family: ApiFamily, body: Json): Json {
  if (family === 'gemini' && isObject(body.generateContentRequest)) return body.generateContentRequest;
  return body;
}

/** The family's answer to a count request. */
export function countTokensResponse(family: ApiFamily, tokens: number): Json {
  return family === 'gemini' ? { totalTokens: tokens } : { input_tokens: tokens };
}

/** Characters per token for English text and code, the average tokenizers land on. */
const CHARS_PER_TOKEN = 4;
/** Tokens of framing per message (role markers). */
const PER_MESSAGE = 4;
/**
 * Tokens per image. Providers charge by pixel count, which the gateway does
 * not decode; this is Anthropic's figure for a ~1.15 megapixel image, their
 * recommended maximum size.
 */
const PER_IMAGE = 1600;

/**
 * An estimate of a request's input tokens.
 *
 * @example
 * ```ts
 * estimateInputTokens(codecFor('anthropic-messages').decodeRequest(body, { model, stream: false }));
 * ```
 */
export function estimateInputTokens(request: ChatRequest): number {
  let chars = request.system.reduce((n, s) => n + s.length, 0);
  let images = 0;
  for (const message of request.messages) {
    for (const part of message.parts) {
      if (part.type === 'text' || part.type === 'thinking') chars += part.text.length;
      else if (part.type === 'image') images++;
      else if (part.type === 'tool_call') chars += part.name.length + part.arguments.length;
      else if (part.type === 'tool_result')
        for (const item of part.content) {
          if (item.type === 'text') chars += item.text.length;
          else images++;
        }
    }
  }
  for (const tool of request.tools ?? [])
    chars += tool.name.length + (tool.description?.length ?? 0) + JSON.stringify(tool.parameters).length;
  return (
    Math.ceil(chars / CHARS_PER_TOKEN) + PER_MESSAGE * (request.messages.length + (request.system.length > 0 ? 1 : 0)) + PER_IMAGE * images
  );
}
