/**
 * @module anthropic
 * The `anthropic` provider kind: the Messages API at
 * `<base_url>/messages` (default base `https://api.anthropic.com/v1`), with
 * `x-api-key` (or a bearer token for OAuth credentials) and the
 * `anthropic-version` header (`options.anthropic_version`, default
 * `2023-06-01`). A client's `anthropic-beta` header is forwarded. Token
 * counts go to `<base_url>/messages/count_tokens`.
 *
 * Options (`providers.<name>.options`):
 * - `anthropic_version`: the API version header
 * - `default_max_tokens`: `max_tokens` for translated requests that set
 *   none (Anthropic requires it; default 4096)
 * - `thinking_modes`: how translated requests ask each model to think, as
 *   `{"<model glob>": "adaptive" | "budget"}`, checked before the built-in
 *   table (`DEFAULT_THINKING_MODES`: Claude 4.6 and later adaptive, earlier
 *   models a `budget_tokens` budget)
 */

import type { AnthropicThinkingMode, EncodeRequestOptions } from '@switchyard/translate';
import { isAnthropicThinkingMode } from '@switchyard/translate';
import { isObject, usageFromAnthropic } from '@switchyard/translate/wire';
import type { ProviderConfig, RelayCredential, UpstreamRequest, Usage } from '../types.js';
import type { BuildInput, ProviderAdapter } from './adapter.js';
import { baseUrlOf, bodyWithModel, classifyUpstreamError } from './http.js';

const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
const DEFAULT_VERSION = '2023-06-01';
/** The beta flag Anthropic requires for OAuth access tokens. */
const OAUTH_BETA = 'oauth-2025-04-20';

function headers(provider: ProviderConfig, credential: RelayCredential | undefined, input: Pick<BuildInput, 'headers'> | undefined) {
  const version = typeof provider.options?.anthropic_version === 'string' ? provider.options.anthropic_version : DEFAULT_VERSION;
  const out: Record<string, string> = { 'content-type': 'application/json', 'anthropic-version': version, ...provider.headers };
  const betas = [input?.headers?.['anthropic-beta'], provider.headers?.['anthropic-beta']].filter((b): b is string => !!b);
  if (credential?.type === 'oauth') {
    out.authorization = `Bearer ${credential.token}`;
    betas.push(OAUTH_BETA);
  } else if (credential) out['x-api-key'] = credential.token;
  if (betas.length > 0) out['anthropic-beta'] = [...new Set(betas.flatMap((b) => b.split(',').map((s) => s.trim())))].join(',');
  return out;
}

function usageOf(usage: unknown): Usage | undefined {
  const parsed = usageFromAnthropic(usage);
  return parsed && (parsed.input !== undefined || parsed.output !== undefined)
    ? { input: parsed.input ?? 0, output: parsed.output ?? 0 }
    : undefined;
}

/**
 * `options.thinking_modes`: model glob → `adaptive` or `budget`. The gateway's config loader refuses
 * any other value; a library caller's stray entry is left out rather than failing every request.
 */
function thinkingModesOf(provider: ProviderConfig): Record<string, AnthropicThinkingMode> | undefined {
  const raw = provider.options?.thinking_modes;
  if (!isObject(raw)) return undefined;
  const modes = Object.fromEntries(
    Object.entries(raw).filter((entry): entry is [string, AnthropicThinkingMode] => isAnthropicThinkingMode(entry[1])),
  );
  return Object.keys(modes).length > 0 ? modes : undefined;
}

const COUNT_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers']);

/**
 * The `anthropic` adapter.
 *
 * @example
 * ```ts
 * const relay = new Relay({ providers: [{ name: 'claude', kind: 'anthropic', models: ['claude-*'] }], adapters: defaultAdapters() });
 * ```
 */
export const anthropicAdapter: ProviderAdapter = {
  kind: 'anthropic',
  family: 'anthropic-messages',
  requiresCredential: true,
  buildRequest(provider, credential, input): UpstreamRequest {
    return {
      url: `${baseUrlOf(provider, ANTHROPIC_BASE_URL)}/messages`,
      method: 'POST',
      headers: { ...headers(provider, credential, input), accept: input.stream ? 'text/event-stream' : 'application/json' },
      body: bodyWithModel(input),
    };
  },
  healthRequest(provider, credential): UpstreamRequest {
    return { url: `${baseUrlOf(provider, ANTHROPIC_BASE_URL)}/models`, method: 'GET', headers: headers(provider, credential, undefined) };
  },
  countTokensRequest(provider, credential, input): UpstreamRequest {
    // count_tokens refuses the generation-only fields (max_tokens, stream, sampling).
    const body = Object.fromEntries(Object.entries({ ...input.body, model: input.upstreamModel }).filter(([key]) => COUNT_FIELDS.has(key)));
    return {
      url: `${baseUrlOf(provider, ANTHROPIC_BASE_URL)}/messages/count_tokens`,
      method: 'POST',
      headers: { ...headers(provider, credential, input), accept: 'application/json' },
      body: JSON.stringify(body),
    };
  },
  countFromResponse: (json) => (isObject(json) && typeof json.input_tokens === 'number' ? json.input_tokens : undefined),
  classify: classifyUpstreamError,
  usageFromResponse: (json) => (isObject(json) ? usageOf(json.usage) : undefined),
  usageFromEvent(json) {
    if (!isObject(json)) return undefined;
    if (json.type === 'message_start' && isObject(json.message)) return usageOf(json.message.usage);
    return usageOf(json.usage);
  },
  encodeOptions(provider) {
    const options: EncodeRequestOptions = {};
    const max = provider.options?.default_max_tokens;
    if (typeof max === 'number' && Number.isInteger(max) && max > 0) options.defaultMaxTokens = max;
    const modes = thinkingModesOf(provider);
    if (modes) options.thinkingModes = modes;
    return options;
  },
};
