/**
 * @module gemini
 * The `gemini` provider kind: Google's Generative Language API,
 * `<base_url>/models/<model>:generateContent` and
 * `:streamGenerateContent?alt=sse` (default base
 * `https://generativelanguage.googleapis.com/v1beta`), with the
 * `x-goog-api-key` header (or a bearer token for OAuth credentials). The
 * model goes in the URL path, escaped, never in the body. Token counts go to
 * `:countTokens`.
 */
import { isObject, type Json, usageFromGemini } from '@switchyard/translate/wire';
import type { ProviderConfig, RelayCredential, UpstreamRequest, Usage } from '../types.js';
import type { ProviderAdapter } from './adapter.js';
import { baseUrlOf, classifyUpstreamError } from './http.js';

const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

function headers(provider: ProviderConfig, credential: RelayCredential | undefined): Record<string, string> {
  const out: Record<string, string> = { 'content-type': 'application/json', ...provider.headers };
  if (credential?.type === 'oauth') out.authorization = `Bearer ${credential.token}`;
  else if (credential) out['x-goog-api-key'] = credential.token;
  return out;
}

/** `models/<name>` for a model name given with or without the prefix, escaped for the path. */
export function geminiModelPath(model: string): string {
  const name = model.startsWith('models/') ? model.slice(7) : model;
  return `models/${encodeURIComponent(name)}`;
}

function usageOf(json: unknown): Usage | undefined {
  const usage = isObject(json) ? usageFromGemini(json.usageMetadata ?? json.usage_metadata) : undefined;
  return usage && usage.input !== undefined ? { input: usage.input, output: usage.output ?? 0 } : undefined;
}

/** Whether a body is already a `countTokens` body rather than a `generateContent` one. */
function isCountBody(body: Json): boolean {
  return body.generateContentRequest !== undefined || Object.keys(body).every((key) => key === 'contents');
}

/**
 * The `gemini` adapter.
 *
 * @example
 * ```ts
 * const relay = new Relay({ providers: [{ name: 'google', kind: 'gemini', models: ['gemini-2.5-*'] }] });
 * ```
 */
export const geminiAdapter: ProviderAdapter = {
  kind: 'gemini',
  family: 'gemini',
  requiresCredential: true,
  buildRequest(provider, credential, input): UpstreamRequest {
    const method = input.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return {
      url: `${baseUrlOf(provider, GEMINI_BASE_URL)}/${geminiModelPath(input.upstreamModel)}:${method}`,
      method: 'POST',
      headers: { ...headers(provider, credential), accept: input.stream ? 'text/event-stream' : 'application/json' },
      body: input.rawBody,
    };
  },
  healthRequest(provider, credential): UpstreamRequest {
    return { url: `${baseUrlOf(provider, GEMINI_BASE_URL)}/models`, method: 'GET', headers: headers(provider, credential) };
  },
  countTokensRequest(provider, credential, input): UpstreamRequest {
    const model = geminiModelPath(input.upstreamModel);
    const body = isCountBody(input.body)
      ? input.rawBody
      : JSON.stringify({ generateContentRequest: { model: decodeURIComponent(model), ...input.body } });
    return {
      url: `${baseUrlOf(provider, GEMINI_BASE_URL)}/${model}:countTokens`,
      method: 'POST',
      headers: headers(provider, credential),
      body,
    };
  },
  countFromResponse: (json) => (isObject(json) && typeof json.totalTokens === 'number' ? json.totalTokens : undefined),
  classify: classifyUpstreamError,
  usageFromResponse: usageOf,
  usageFromEvent: usageOf,
};
