/**
 * @module openai
 * The `openai` and `openai-compatible` provider kinds: the chat completions
 * API at `<base_url>/chat/completions`, bearer-token auth. `openai-compatible`
 * is the same wire format for any other vendor or a local server, with its
 * own base URL, extra headers, model list and aliases.
 */
import type { ProviderConfig, RelayCredential, UpstreamFailure, UpstreamRequest, Usage } from '../types.js';
import type { BuildInput, ProviderAdapter } from './adapter.js';
import { baseUrlOf, classifyUpstreamError } from './http.js';

const OPENAI_BASE_URL = 'https://api.openai.com/v1';
const baseUrl = baseUrlOf;

function headers(provider: ProviderConfig, credential: RelayCredential | undefined, extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { ...extra, ...provider.headers };
  if (credential) out.authorization = `Bearer ${credential.token}`;
  return out;
}

const USAGE_FLAG = Buffer.from('"stream_options":{"include_usage":true},');

/**
 * The request body for one attempt. The client's bytes go through untouched
 * unless a field must change: an aliased model name, or (when streaming) the
 * `stream_options.include_usage` flag the relay needs to count tokens.
 */
export function chatBody(input: BuildInput): Uint8Array | string {
  const { body } = input;
  const streamOptions = body.stream_options as { include_usage?: unknown } | undefined;
  const renameModel = body.model !== input.upstreamModel;
  const askUsage = input.stream && streamOptions?.include_usage !== true;
  if (!renameModel && !askUsage) return input.rawBody;
  if (!renameModel && !('stream_options' in body)) {
    // The usual streaming request: add the flag in front of the client's bytes instead of re-serializing the body.
    const open = input.rawBody.indexOf(0x7b); // `{`
    if (open >= 0) return Buffer.concat([input.rawBody.subarray(0, open + 1), USAGE_FLAG, input.rawBody.subarray(open + 1)]);
  }
  const rewritten: Record<string, unknown> = { ...body, model: input.upstreamModel };
  if (askUsage) rewritten.stream_options = { ...(streamOptions ?? {}), include_usage: true };
  return JSON.stringify(rewritten);
}

/** Usage from an OpenAI chat completion (or a streamed chunk carrying `usage`). */
export function openAiUsage(json: unknown): Usage | undefined {
  const usage = (json as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } } | null)?.usage;
  if (!usage || typeof usage.prompt_tokens !== 'number') return undefined;
  return { input: usage.prompt_tokens, output: typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0 };
}

/** Classifies an OpenAI-style error response (any family's error body is understood). */
export function classifyOpenAiError(status: number, headerMap: Record<string, string>, body: Uint8Array, now: number): UpstreamFailure {
  return classifyUpstreamError(status, headerMap, body, now);
}

function createOpenAiAdapter(kind: 'openai' | 'openai-compatible', defaultBaseUrl: string | undefined): ProviderAdapter {
  return {
    kind,
    family: 'openai-chat',
    requiresCredential: kind === 'openai',
    buildRequest(provider, credential, input): UpstreamRequest {
      return {
        url: `${baseUrl(provider, defaultBaseUrl)}/chat/completions`,
        method: 'POST',
        headers: headers(provider, credential, {
          'content-type': 'application/json',
          accept: input.stream ? 'text/event-stream' : 'application/json',
        }),
        body: chatBody(input),
      };
    },
    healthRequest(provider, credential): UpstreamRequest {
      return {
        url: `${baseUrl(provider, defaultBaseUrl)}/models`,
        method: 'GET',
        headers: headers(provider, credential, { accept: 'application/json' }),
      };
    },
    classify: classifyOpenAiError,
    usageFromResponse: openAiUsage,
    usageFromEvent: openAiUsage,
    encodeOptions(provider) {
      // OpenAI's reasoning models refuse `max_tokens`; many compatible servers know only `max_tokens`.
      const field = provider.options?.max_tokens_field;
      if (field === 'max_tokens' || field === 'max_completion_tokens') return { maxTokensField: field };
      return { maxTokensField: kind === 'openai' ? 'max_completion_tokens' : 'max_tokens' };
    },
  };
}

/** OpenAI itself (`https://api.openai.com/v1` unless `base_url` says otherwise). */
export const openAiAdapter: ProviderAdapter = createOpenAiAdapter('openai', OPENAI_BASE_URL);

/** Any OpenAI-compatible API; `base_url` is required, the credential optional (local servers). */
export const openAiCompatibleAdapter: ProviderAdapter = createOpenAiAdapter('openai-compatible', undefined);
