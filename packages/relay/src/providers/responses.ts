/**
 * @module responses
 * The `openai-responses` provider kind: OpenAI's Responses API at
 * `<base_url>/responses` (default `https://api.openai.com/v1`), bearer-token
 * auth. Use it for models served only through Responses, or to keep
 * Responses features (stored conversations, `previous_response_id`) for
 * Responses clients, whose requests pass through untouched.
 */
import { isObject, usageFromResponses } from '@switchyard/translate/wire';
import type { ProviderConfig, RelayCredential, UpstreamRequest, Usage } from '../types.js';
import type { ProviderAdapter } from './adapter.js';
import { baseUrlOf, bodyWithModel, classifyUpstreamError } from './http.js';

const OPENAI_BASE_URL = 'https://api.openai.com/v1';

function headers(provider: ProviderConfig, credential: RelayCredential | undefined, extra: Record<string, string>) {
  const out: Record<string, string> = { ...extra, ...provider.headers };
  if (credential) out.authorization = `Bearer ${credential.token}`;
  return out;
}

function usageOf(usage: unknown): Usage | undefined {
  const parsed = usageFromResponses(usage);
  return parsed?.input !== undefined ? { input: parsed.input, output: parsed.output ?? 0 } : undefined;
}

/**
 * The `openai-responses` adapter.
 *
 * @example
 * ```ts
 * const relay = new Relay({ providers: [{ name: 'codex', kind: 'openai-responses', models: ['gpt-5-codex'] }] });
 * ```
 */
export const openAiResponsesAdapter: ProviderAdapter = {
  kind: 'openai-responses',
  family: 'openai-responses',
  requiresCredential: true,
  buildRequest(provider, credential, input): UpstreamRequest {
    return {
      url: `${baseUrlOf(provider, OPENAI_BASE_URL)}/responses`,
      method: 'POST',
      headers: headers(provider, credential, {
        'content-type': 'application/json',
        accept: input.stream ? 'text/event-stream' : 'application/json',
      }),
      body: bodyWithModel(input),
    };
  },
  healthRequest(provider, credential): UpstreamRequest {
    return {
      url: `${baseUrlOf(provider, OPENAI_BASE_URL)}/models`,
      method: 'GET',
      headers: headers(provider, credential, { accept: 'application/json' }),
    };
  },
  classify: classifyUpstreamError,
  usageFromResponse: (json) => (isObject(json) ? usageOf(json.usage) : undefined),
  usageFromEvent: (json) => (isObject(json) && isObject(json.response) ? usageOf(json.response.usage) : undefined),
};
