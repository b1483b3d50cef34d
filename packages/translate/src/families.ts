/**
 * @module families
 * The four API families' codecs, and the functions that translate a
 * request, a complete response or a stream from one family to another
 * through the neutral model.
 */

import { decodeMessagesRequest, encodeMessagesRequest } from './anthropic/request.js';
import { decodeMessagesResponse, encodeMessagesResponse } from './anthropic/response.js';
import { MessagesStreamDecoder, MessagesStreamEncoder, messagesStreamError } from './anthropic/stream.js';
import type { ApiFamily } from './apiFamily.js';
import type { DecodeContext, EncodeRequestOptions, FamilyCodec } from './codec.js';
import { anthropicErrorBody, geminiErrorBody, openAiErrorBody } from './errorShapes.js';
import { type Json, unsupported } from './fields.js';
import { decodeGenerateContentRequest, encodeGenerateContentRequest } from './gemini/request.js';
import { decodeGenerateContentResponse, encodeGenerateContentResponse } from './gemini/response.js';
import { GenerateContentStreamDecoder, GenerateContentStreamEncoder, geminiStreamError } from './gemini/stream.js';
import type { ChatRequest, ChatResponse, EncodeContext } from './ir.js';
import { decodeChatRequest, encodeChatRequest } from './openaiChat/request.js';
import { decodeChatResponse, encodeChatResponse } from './openaiChat/response.js';
import { ChatStreamDecoder, ChatStreamEncoder, chatStreamError } from './openaiChat/stream.js';
import { decodeResponsesRequest, encodeResponsesRequest } from './responses/request.js';
import { decodeResponsesResponse, encodeResponsesResponse } from './responses/response.js';
import { ResponsesStreamDecoder, ResponsesStreamEncoder, responsesStreamError } from './responses/stream.js';

/** OpenAI chat completions. */
export const openAiChatCodec: FamilyCodec = {
  family: 'openai-chat',
  decodeRequest: decodeChatRequest,
  encodeRequest: encodeChatRequest,
  decodeResponse: decodeChatResponse,
  encodeResponse: encodeChatResponse,
  streamDecoder: () => new ChatStreamDecoder(),
  streamEncoder: (context) => new ChatStreamEncoder(context),
  errorBody: openAiErrorBody,
  streamError: chatStreamError,
};

/** OpenAI Responses. */
export const responsesCodec: FamilyCodec = {
  family: 'openai-responses',
  decodeRequest: decodeResponsesRequest,
  encodeRequest: encodeResponsesRequest,
  decodeResponse: decodeResponsesResponse,
  encodeResponse: encodeResponsesResponse,
  streamDecoder: () => new ResponsesStreamDecoder(),
  streamEncoder: (context) => new ResponsesStreamEncoder(context),
  errorBody: openAiErrorBody,
  streamError: responsesStreamError,
};

/** Anthropic Messages. */
export const anthropicCodec: FamilyCodec = {
  family: 'anthropic-messages',
  decodeRequest: decodeMessagesRequest,
  encodeRequest: encodeMessagesRequest,
  decodeResponse: decodeMessagesResponse,
  encodeResponse: encodeMessagesResponse,
  streamDecoder: () => new MessagesStreamDecoder(),
  streamEncoder: (context) => new MessagesStreamEncoder(context),
  errorBody: anthropicErrorBody,
  streamError: messagesStreamError,
};

/** Gemini generateContent. */
export const geminiCodec: FamilyCodec = {
  family: 'gemini',
  decodeRequest: decodeGenerateContentRequest,
  encodeRequest: encodeGenerateContentRequest,
  decodeResponse: decodeGenerateContentResponse,
  encodeResponse: encodeGenerateContentResponse,
  streamDecoder: () => new GenerateContentStreamDecoder(),
  streamEncoder: (context) => new GenerateContentStreamEncoder(context),
  errorBody: geminiErrorBody,
  streamError: geminiStreamError,
};

const CODECS: Record<ApiFamily, FamilyCodec> = {
  'openai-chat': openAiChatCodec,
  'openai-responses': responsesCodec,
  'anthropic-messages': anthropicCodec,
  gemini: geminiCodec,
};

/** Every API family. */
export const API_FAMILIES: readonly ApiFamily[] = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'];

/**
 * The codec of a family.
 *
 * @example
 * ```ts
 * const ir = codecFor('anthropic-messages').decodeRequest(body, { model: body.model, stream: false });
 * ```
 */
export function codecFor(family: ApiFamily): FamilyCodec {
  return CODECS[family];
}

/** A translated request: the body for the target family, and the source fields it could not carry. */
export interface TranslatedRequest {
  body: Json;
  /** The neutral request, for callers that need more (the stream flag, usage wishes). */
  request: ChatRequest;
  dropped: string[];
}

/**
 * Translates a request body from one family to another.
 *
 * @example
 * ```ts
 * const { body } = translateRequest('openai-chat', 'anthropic-messages', chatBody, { model: 'claude-sonnet-4', stream: false });
 * ```
 */
export function translateRequest(
  from: ApiFamily,
  to: ApiFamily,
  body: Json,
  context: DecodeContext,
  options?: EncodeRequestOptions,
): TranslatedRequest {
  const request = codecFor(from).decodeRequest(body, context);
  if (from !== to && request.candidates !== undefined && request.candidates > 1)
    unsupported(from === 'gemini' ? 'generationConfig.candidateCount' : 'n', 'more than one answer per request cannot be translated');
  const encoded = codecFor(to).encodeRequest(request, options);
  return { body: encoded, request, dropped: request.dropped };
}

/**
 * Translates a complete response body from one family to another.
 *
 * @example
 * ```ts
 * const chatCompletion = translateResponse('anthropic-messages', 'openai-chat', message, { model: 'claude', requestId: 'r1', now: Date.now() });
 * ```
 */
export function translateResponse(
  from: ApiFamily,
  to: ApiFamily,
  json: unknown,
  context: EncodeContext,
): { body: Json; response: ChatResponse } {
  const response = codecFor(from).decodeResponse(json);
  return { body: codecFor(to).encodeResponse(response, context), response };
}
