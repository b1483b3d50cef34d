import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProviderConfig } from '../types.js';
import type { BuildInput } from './adapter.js';
import { anthropicAdapter } from './anthropic.js';
import { codeAssistantAdapter, codeAssistantEndpoint } from './codeAssistant.js';
import { geminiAdapter } from './gemini.js';
import { classifyUpstreamError } from './http.js';
import { openAiAdapter, openAiCompatibleAdapter } from './openai.js';
import { openAiResponsesAdapter } from './responses.js';

const input = (body: Record<string, unknown>, extra: Partial<BuildInput> = {}): BuildInput => ({
  body,
  rawBody: Buffer.from(JSON.stringify(body)),
  upstreamModel: String(body.model ?? 'm'),
  stream: body.stream === true,
  ...extra,
});
const provider = (kind: string, more: Partial<ProviderConfig> = {}): ProviderConfig => ({ name: 'p', kind, ...more });
const key = { id: 'k', token: 'secret-key' };

describe('anthropic adapter', () => {
  test('Messages URL, x-api-key, anthropic-version, forwarded betas; OAuth tokens as bearer with the OAuth beta', () => {
    const request = anthropicAdapter.buildRequest(
      provider('anthropic'),
      key,
      input({ model: 'claude', messages: [] }, { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } }),
    );
    assert.equal(request.url, 'https://api.anthropic.com/v1/messages');
    assert.equal(request.headers['x-api-key'], 'secret-key');
    assert.equal(request.headers['anthropic-version'], '2023-06-01');
    assert.equal(request.headers['anthropic-beta'], 'interleaved-thinking-2025-05-14');
    assert.equal(request.headers.authorization, undefined);
    const oauth = anthropicAdapter.buildRequest(
      provider('anthropic', { options: { anthropic_version: '2024-01-01' } }),
      { ...key, type: 'oauth' },
      input({ model: 'claude' }),
    );
    assert.equal(oauth.headers.authorization, 'Bearer secret-key');
    assert.equal(oauth.headers['x-api-key'], undefined);
    assert.equal(oauth.headers['anthropic-beta'], 'oauth-2025-04-20');
    assert.equal(oauth.headers['anthropic-version'], '2024-01-01');
  });

  test('an alias renames only the model; count_tokens keeps only the fields it accepts', () => {
    const body = { model: 'alias', max_tokens: 5, messages: [{ role: 'user', content: 'x' }], stream: false, temperature: 1 };
    const request = anthropicAdapter.buildRequest(provider('anthropic'), key, input(body, { upstreamModel: 'claude-real' }));
    assert.deepEqual(JSON.parse(String(request.body)), { ...body, model: 'claude-real' });
    const count = anthropicAdapter.countTokensRequest!(
      provider('anthropic', { baseUrl: 'http://127.0.0.1:1/v1/' }),
      key,
      input(body, { upstreamModel: 'claude-real' }),
    );
    assert.equal(count.url, 'http://127.0.0.1:1/v1/messages/count_tokens');
    assert.deepEqual(JSON.parse(String(count.body)), { model: 'claude-real', messages: body.messages });
    assert.equal(anthropicAdapter.countFromResponse!({ input_tokens: 12 }), 12);
  });

  test('usage from message_start and message_delta; cache reads count as input', () => {
    assert.deepEqual(
      anthropicAdapter.usageFromEvent({
        type: 'message_start',
        message: { usage: { input_tokens: 3, cache_read_input_tokens: 10, output_tokens: 1 } },
      }),
      { input: 13, output: 1 },
    );
    assert.deepEqual(anthropicAdapter.usageFromEvent({ type: 'message_delta', usage: { output_tokens: 40 } }), { input: 0, output: 40 });
    assert.deepEqual(anthropicAdapter.usageFromResponse({ usage: { input_tokens: 5, output_tokens: 6 } }), { input: 5, output: 6 });
  });
});

describe('gemini adapter', () => {
  test('the model goes in the path, escaped; streaming asks for SSE; the key in x-goog-api-key', () => {
    const plain = geminiAdapter.buildRequest(
      provider('gemini'),
      key,
      input({ contents: [] }, { upstreamModel: 'models/gemini-2.5-flash' }),
    );
    assert.equal(plain.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(plain.headers['x-goog-api-key'], 'secret-key');
    const streamed = geminiAdapter.buildRequest(
      provider('gemini', { baseUrl: 'http://127.0.0.1:9/v1beta' }),
      key,
      input({ contents: [] }, { upstreamModel: '../x?y', stream: true }),
    );
    assert.equal(streamed.url, 'http://127.0.0.1:9/v1beta/models/..%2Fx%3Fy:streamGenerateContent?alt=sse');
    const oauth = geminiAdapter.buildRequest(provider('gemini'), { ...key, type: 'oauth' }, input({ contents: [] }));
    assert.equal(oauth.headers.authorization, 'Bearer secret-key');
  });

  test('countTokens wraps a generateContent body and passes a countTokens body as it is', () => {
    const wrapped = geminiAdapter.countTokensRequest!(
      provider('gemini'),
      key,
      input({ contents: [], systemInstruction: { parts: [{ text: 's' }] } }, { upstreamModel: 'g' }),
    );
    assert.deepEqual(JSON.parse(String(wrapped.body)), {
      generateContentRequest: { model: 'models/g', contents: [], systemInstruction: { parts: [{ text: 's' }] } },
    });
    const raw = geminiAdapter.countTokensRequest!(
      provider('gemini'),
      key,
      input({ contents: [{ parts: [{ text: 'x' }] }] }, { upstreamModel: 'g' }),
    );
    assert.equal(String(raw.body), JSON.stringify({ contents: [{ parts: [{ text: 'x' }] }] }));
    assert.equal(geminiAdapter.countFromResponse!({ totalTokens: 31 }), 31);
  });
});

describe('code-assistant adapter', () => {
  test('the endpoint from the token exchange wins, if it is https', () => {
    assert.equal(codeAssistantEndpoint(provider('code-assistant'), undefined), 'https://api.githubcopilot.com');
    assert.equal(
      codeAssistantEndpoint(provider('code-assistant'), { ...key, metadata: { api_endpoint: 'https://api.business.example/' } }),
      'https://api.business.example',
    );
    assert.equal(
      codeAssistantEndpoint(provider('code-assistant', { baseUrl: 'http://127.0.0.1:5' }), {
        ...key,
        metadata: { api_endpoint: 'http://evil.example' },
      }),
      'http://127.0.0.1:5',
    );
  });

  test('editor identity, initiator and vision headers; the exchanged token as bearer', () => {
    const user = codeAssistantAdapter.buildRequest(
      provider('code-assistant'),
      key,
      input({ model: 'gpt-4.1', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] }),
    );
    assert.equal(user.url, 'https://api.githubcopilot.com/chat/completions');
    assert.equal(user.headers.authorization, 'Bearer secret-key');
    assert.equal(user.headers['copilot-integration-id'], 'vscode-chat');
    assert.equal(user.headers['x-initiator'], 'user');
    assert.equal(user.headers['copilot-vision-request'], 'true');
    const agent = codeAssistantAdapter.buildRequest(
      provider('code-assistant', { headers: { 'editor-version': 'switchyard/1' } }),
      key,
      input({ model: 'gpt-4.1', messages: [{ role: 'tool', tool_call_id: 'c', content: 'r' }] }),
    );
    assert.equal(agent.headers['x-initiator'], 'agent');
    assert.equal(agent.headers['copilot-vision-request'], undefined);
    assert.equal(agent.headers['editor-version'], 'switchyard/1');
  });
});

describe('OpenAI adapters', () => {
  test('translated requests carry the output limit in the field each kind understands', () => {
    assert.deepEqual(openAiAdapter.encodeOptions!(provider('openai')), { maxTokensField: 'max_completion_tokens' });
    assert.deepEqual(openAiCompatibleAdapter.encodeOptions!(provider('openai-compatible')), { maxTokensField: 'max_tokens' });
    assert.deepEqual(
      openAiCompatibleAdapter.encodeOptions!(provider('openai-compatible', { options: { max_tokens_field: 'max_completion_tokens' } })),
      { maxTokensField: 'max_completion_tokens' },
    );
  });

  test('the Responses kind posts to /responses and reads usage from response.completed', () => {
    const request = openAiResponsesAdapter.buildRequest(provider('openai-responses'), key, input({ model: 'gpt-5', input: 'x' }));
    assert.equal(request.url, 'https://api.openai.com/v1/responses');
    assert.equal(request.headers.authorization, 'Bearer secret-key');
    assert.deepEqual(
      openAiResponsesAdapter.usageFromEvent({ type: 'response.completed', response: { usage: { input_tokens: 3, output_tokens: 4 } } }),
      { input: 3, output: 4 },
    );
  });
});

describe('classifying upstream errors of any family', () => {
  const body = (value: unknown) => Buffer.from(JSON.stringify(value));
  test('statuses, quota, Anthropic overload, and every way of saying how long to wait', () => {
    const now = Date.UTC(2026, 0, 1);
    assert.equal(
      classifyUpstreamError(529, {}, body({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), now).kind,
      'server',
    );
    assert.equal(classifyUpstreamError(429, {}, body({ error: { message: 'q', code: 'insufficient_quota' } }), now).kind, 'quota_exceeded');
    const google = classifyUpstreamError(
      429,
      {},
      body({
        error: {
          code: 429,
          message: 'slow down',
          status: 'RESOURCE_EXHAUSTED',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12.5s' }],
        },
      }),
      now,
    );
    assert.deepEqual([google.kind, google.retryAfterMs, google.message], ['rate_limit', 12_500, 'slow down']);
    const anthropic = classifyUpstreamError(
      429,
      { 'anthropic-ratelimit-requests-reset': new Date(now + 9_000).toISOString() },
      body({}),
      now,
    );
    assert.equal(anthropic.retryAfterMs, 9_000);
    assert.equal(classifyUpstreamError(429, { 'retry-after': '2' }, body({}), now).retryAfterMs, 2_000);
    assert.equal(classifyUpstreamError(403, {}, Buffer.from('nope'), now).kind, 'unauthorized');
    assert.equal(classifyUpstreamError(413, {}, Buffer.alloc(0), now).kind, 'client');
  });
});

describe('openai chat body', () => {
  const bodyText = (body: Uint8Array | string | undefined) => (typeof body === 'string' ? body : Buffer.from(body!).toString('utf8'));

  test('a plain request goes up as the client sent it, byte for byte', () => {
    const raw = Buffer.from('{ "model":"m",  "messages":[] , "x":1e2}');
    const request = openAiCompatibleAdapter.buildRequest(provider('openai-compatible', { baseUrl: 'http://u/v1' }), undefined, {
      ...input({ model: 'm', messages: [], x: 100 }),
      rawBody: raw,
    });
    assert.equal(bodyText(request.body), raw.toString('utf8'));
  });

  test('a stream without stream_options gets include_usage added in front of the client bytes, the rest untouched', () => {
    const raw = Buffer.from('  {"model":"m","stream":true,"messages":[{"role":"user","content":"hé"}],"n":1.50}');
    const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    const request = openAiCompatibleAdapter.buildRequest(provider('openai-compatible', { baseUrl: 'http://u/v1' }), undefined, {
      ...input(body),
      rawBody: raw,
    });
    const sent = bodyText(request.body);
    assert.equal(sent, `  {"stream_options":{"include_usage":true},${raw.toString('utf8').slice(3)}`);
    assert.deepEqual(JSON.parse(sent), { ...body, stream_options: { include_usage: true } });
  });

  test('a stream with stream_options, or an aliased model, is rewritten with every other field kept', () => {
    const own = input({ model: 'm', stream: true, messages: [], stream_options: { other: 1 } });
    const withOptions = openAiCompatibleAdapter.buildRequest(provider('openai-compatible', { baseUrl: 'http://u/v1' }), undefined, own);
    assert.deepEqual(JSON.parse(bodyText(withOptions.body)), { ...own.body, stream_options: { other: 1, include_usage: true } });
    const aliased = openAiCompatibleAdapter.buildRequest(provider('openai-compatible', { baseUrl: 'http://u/v1' }), undefined, {
      ...input({ model: 'fast', stream: true, messages: [] }),
      upstreamModel: 'gpt-4o-mini',
    });
    assert.deepEqual(JSON.parse(bodyText(aliased.body)), {
      model: 'gpt-4o-mini',
      stream: true,
      messages: [],
      stream_options: { include_usage: true },
    });
  });
});
