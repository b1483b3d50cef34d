/**
 * @module ingressFormat
 * Error bodies in the client's own API family, so each SDK raises its own
 * typed exception: OpenAI's `{"error": {"message", "type", "param",
 * "code"}}` (chat completions and Responses), Anthropic's
 * `{"type": "error", "error": {"type", "message"}}` and Google's
 * `{"error": {"code", "message", "status", "details"}}`. Inside a stream,
 * an error becomes the family's own error event: a `data:` event for
 * OpenAI chat and Gemini, `event: error` for Anthropic and Responses.
 */
import { codecFor } from '@switchyard/translate';
import type { RelayFailure } from './errors.js';
import type { ApiFamily } from './types.js';

/** Formats errors for one client family. */
export interface IngressFormat {
  /** Body and headers of an error response. */
  errorResponse(failure: RelayFailure, requestId?: string): { body: string; headers: Record<string, string> };
  /** An in-stream error event, sent when a stream fails after its first byte. */
  streamError(failure: RelayFailure): string;
}

function formatFor(family: ApiFamily): IngressFormat {
  const codec = codecFor(family);
  return {
    errorResponse(failure, requestId) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (failure.retryAfterSeconds !== undefined) headers['retry-after'] = String(failure.retryAfterSeconds);
      return { body: JSON.stringify(codec.errorBody(failure, requestId)), headers };
    },
    streamError: (failure) => codec.streamError(failure),
  };
}

/** The OpenAI chat completions family. */
export const openAiFormat: IngressFormat = formatFor('openai-chat');

const FORMATS: Record<ApiFamily, IngressFormat> = {
  'openai-chat': openAiFormat,
  'openai-responses': formatFor('openai-responses'),
  'anthropic-messages': formatFor('anthropic-messages'),
  gemini: formatFor('gemini'),
};

/**
 * The error format for a client family.
 *
 * @example
 * ```ts
 * const { body, headers } = ingressFormat('anthropic-messages').errorResponse(failure, requestId);
 * ```
 */
export function ingressFormat(family: ApiFamily): IngressFormat {
  return FORMATS[family] ?? openAiFormat;
}
