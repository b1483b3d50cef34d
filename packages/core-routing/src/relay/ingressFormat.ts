/**
 * @module ingressFormat
 * Error bodies in the client's own API family. A client that speaks OpenAI
 * gets `{"error": {"message", "type", "param", "code"}}`, as OpenAI's SDKs
 * expect, including inside a stream, where an error becomes one `data:`
 * event the SDK turns into an exception.
 */
import type { RelayFailure } from './errors.js';
import type { ApiFamily } from './types.js';

/** Formats errors for one client family. */
export interface IngressFormat {
  /** Body and headers of an error response. */
  errorResponse(failure: RelayFailure): { body: string; headers: Record<string, string> };
  /** An in-stream error event, sent when a stream fails after its first byte. */
  streamError(failure: RelayFailure): string;
}

function openAiError(failure: RelayFailure): Record<string, unknown> {
  const error: Record<string, unknown> = {
    message: failure.message,
    type: failure.type,
    param: failure.param ?? null,
    code: failure.code,
  };
  if (failure.upstreamStatus !== undefined) error.upstream_status = failure.upstreamStatus;
  return { error };
}

/** The OpenAI chat completions family. */
export const openAiFormat: IngressFormat = {
  errorResponse(failure) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (failure.retryAfterSeconds !== undefined) headers['retry-after'] = String(failure.retryAfterSeconds);
    return { body: JSON.stringify(openAiError(failure)), headers };
  },
  streamError(failure) {
    return `data: ${JSON.stringify(openAiError(failure))}\n\n`;
  },
};

/** The error format for a client family (the translation issue adds the others). */
export function ingressFormat(family: ApiFamily): IngressFormat {
  switch (family) {
    case 'openai-chat':
      return openAiFormat;
    default:
      return openAiFormat;
  }
}
