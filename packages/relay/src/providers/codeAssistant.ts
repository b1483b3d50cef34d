/**
 * @module codeAssistant
 * The `code-assistant` provider kind: a coding assistant's chat API that
 * speaks OpenAI chat completions (GitHub Copilot's, for one), reached with a
 * short-lived API token. The credentials package signs the account in with
 * a device flow, exchanges the account token for that API token and
 * refreshes it before it expires; this adapter only sends the token it is
 * handed, as a bearer token.
 *
 * Endpoint: the API endpoint the token exchange returned
 * (`credential.metadata.api_endpoint`, which differs for individual and
 * business accounts), else `base_url`, else
 * `https://api.githubcopilot.com`. Requests go to `<endpoint>/chat/completions`.
 *
 * Headers: the service identifies the calling editor integration. Defaults
 * (each overridable with `providers.<name>.headers`):
 * `copilot-integration-id: vscode-chat`, `editor-version`,
 * `editor-plugin-version`, `openai-intent: conversation-panel`. Per request,
 * `x-initiator` says whether a person (`user`: the last message is the
 * user's) or an agent loop (`agent`: tool results, continuations) made the
 * call, which the service bills differently, and
 * `copilot-vision-request: true` marks requests carrying images.
 */
import { isObject } from '@switchyard/translate/wire';
import type { ProviderConfig, RelayCredential, UpstreamRequest } from '../types.js';
import type { BuildInput, ProviderAdapter } from './adapter.js';
import { baseUrlOf } from './http.js';
import { chatBody, classifyOpenAiError, openAiUsage } from './openai.js';

const DEFAULT_ENDPOINT = 'https://api.githubcopilot.com';

const IDENTITY_HEADERS: Readonly<Record<string, string>> = {
  'copilot-integration-id': 'vscode-chat',
  'editor-version': 'vscode/1.99.3',
  'editor-plugin-version': 'copilot-chat/0.26.7',
  'openai-intent': 'conversation-panel',
};

/** The endpoint: the token exchange's, when it gave an https one, else the configured base URL. */
export function codeAssistantEndpoint(provider: ProviderConfig, credential: RelayCredential | undefined): string {
  // `api_endpoint` as the token exchange names it; `api_base_url` as the credentials package stores it.
  const fromToken = credential?.metadata?.api_endpoint ?? credential?.metadata?.api_base_url;
  if (fromToken) {
    let url: URL | undefined;
    try {
      url = new URL(fromToken);
    } catch {
      url = undefined;
    }
    // The endpoint travels with the token; refuse anything but https so a tampered record cannot redirect traffic in clear.
    if (url?.protocol === 'https:') return fromToken.endsWith('/') ? fromToken.slice(0, -1) : fromToken;
  }
  return baseUrlOf(provider, DEFAULT_ENDPOINT);
}

function initiator(body: Record<string, unknown>): 'user' | 'agent' {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  return isObject(last) && last.role === 'user' ? 'user' : 'agent';
}

function hasImages(body: Record<string, unknown>): boolean {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messages.some((m) => isObject(m) && Array.isArray(m.content) && m.content.some((p) => isObject(p) && p.type === 'image_url'));
}

function headers(provider: ProviderConfig, credential: RelayCredential | undefined, input: BuildInput | undefined): Record<string, string> {
  const out: Record<string, string> = { ...IDENTITY_HEADERS, 'content-type': 'application/json' };
  if (input) {
    out.accept = input.stream ? 'text/event-stream' : 'application/json';
    out['x-initiator'] = initiator(input.body);
    if (hasImages(input.body)) out['copilot-vision-request'] = 'true';
  }
  Object.assign(out, provider.headers);
  if (credential) out.authorization = `Bearer ${credential.token}`;
  return out;
}

/**
 * The `code-assistant` adapter.
 *
 * @example
 * ```ts
 * const providers = [{ name: 'assistant', kind: 'code-assistant', models: ['gpt-4.1', 'claude-sonnet-4'] }];
 * ```
 */
export const codeAssistantAdapter: ProviderAdapter = {
  kind: 'code-assistant',
  family: 'openai-chat',
  requiresCredential: true,
  buildRequest(provider, credential, input): UpstreamRequest {
    return {
      url: `${codeAssistantEndpoint(provider, credential)}/chat/completions`,
      method: 'POST',
      headers: headers(provider, credential, input),
      body: chatBody(input),
    };
  },
  healthRequest(provider, credential): UpstreamRequest {
    return {
      url: `${codeAssistantEndpoint(provider, credential)}/models`,
      method: 'GET',
      headers: headers(provider, credential, undefined),
    };
  },
  classify: classifyOpenAiError,
  usageFromResponse: openAiUsage,
  usageFromEvent: openAiUsage,
};
