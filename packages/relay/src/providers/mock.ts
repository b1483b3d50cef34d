/**
 * @module mock
 * The `mock` provider kind: a DEMO upstream that answers in process, so the
 * gateway works out of the box with no API key and no network. It speaks
 * the OpenAI chat completions format (plain and streamed), reports token
 * usage, and can be told to be slow or to fail, to show cooldown and
 * failover on a dashboard. It is not a model: it says it is a mock and
 * echoes the last user message.
 *
 * Options (`providers.<name>.options`):
 * - `latency_ms`: wait before answering (default 0)
 * - `chunk_delay_ms`: wait between streamed chunks (default 0)
 * - `fail_every`: every Nth request answers 500 (default never)
 * - `rate_limit_every`: every Nth request answers 429 with `Retry-After: 1` (default never)
 * - `reply`: fixed reply text instead of the echo
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProviderConfig, UpstreamRequest, UpstreamResponse } from '../types.js';
import type { ProviderAdapter, Transport } from './adapter.js';
import { chatBody, classifyOpenAiError, openAiUsage } from './openai.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface MockBehaviour {
  latencyMs: number;
  chunkDelayMs: number;
  failEvery: number;
  rateLimitEvery: number;
  reply: string | undefined;
}

function behaviour(options: Record<string, unknown> | undefined): MockBehaviour {
  const number = (key: string) => (typeof options?.[key] === 'number' && Number.isFinite(options[key]) ? (options[key] as number) : 0);
  return {
    latencyMs: number('latency_ms'),
    chunkDelayMs: number('chunk_delay_ms'),
    failEvery: number('fail_every'),
    rateLimitEvery: number('rate_limit_every'),
    reply: typeof options?.reply === 'string' ? options.reply : undefined,
  };
}

/** Roughly four characters per token, as tokenizers average on English text. */
const estimateTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as { role?: unknown; content?: unknown };
    if (message?.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (Array.isArray(message.content)) {
      return message.content
        .map((part: { type?: unknown; text?: unknown }) => (part?.type === 'text' && typeof part.text === 'string' ? part.text : ''))
        .join(' ');
    }
  }
  return '';
}

function jsonResponse(status: number, body: unknown, extraHeaders: Record<string, string> = {}): UpstreamResponse {
  const bytes = encoder.encode(JSON.stringify(body));
  return {
    status,
    headers: { 'content-type': 'application/json', ...extraHeaders },
    body: (async function* () {
      yield bytes;
    })(),
    cancel() {},
  };
}

const MOCK_SCHEME = 'mock://';

function mockUrl(provider: string, path: string): string {
  return `${MOCK_SCHEME}${encodeURIComponent(provider)}/${path}`;
}

function providerName(url: string): string {
  const end = url.indexOf('/', MOCK_SCHEME.length);
  return decodeURIComponent(url.slice(MOCK_SCHEME.length, end < 0 ? undefined : end));
}

/** The in-process transport behind every `mock` provider. */
export class MockTransport implements Transport {
  private readonly providers = new Map<string, ProviderConfig>();
  private readonly counters = new Map<string, number>();

  /** Registers (or updates) a mock provider's behaviour. */
  configure(provider: ProviderConfig): void {
    this.providers.set(provider.name, provider);
  }

  async send(request: UpstreamRequest, options: { signal?: AbortSignal }): Promise<UpstreamResponse> {
    const name = providerName(request.url);
    const provider = this.providers.get(name);
    const mock = behaviour(provider?.options);
    if (mock.latencyMs > 0) await sleep(mock.latencyMs, undefined, options.signal ? { signal: options.signal } : {});
    if (request.method === 'GET')
      return jsonResponse(200, {
        object: 'list',
        data: (provider?.models ?? []).map((id) => ({ id, object: 'model', owned_by: 'switchyard-mock' })),
      });
    const count = (this.counters.get(name) ?? 0) + 1;
    this.counters.set(name, count);
    if (mock.rateLimitEvery > 0 && count % mock.rateLimitEvery === 0) {
      return jsonResponse(
        429,
        { error: { message: 'mock provider: simulated rate limit', type: 'rate_limit_error', code: 'rate_limit_exceeded' } },
        { 'retry-after': '1' },
      );
    }
    if (mock.failEvery > 0 && count % mock.failEvery === 0) {
      return jsonResponse(500, { error: { message: 'mock provider: simulated server error', type: 'server_error', code: null } });
    }
    const body = JSON.parse(typeof request.body === 'string' ? request.body : decoder.decode(request.body ?? new Uint8Array())) as Record<
      string,
      unknown
    >;
    const model = String(body.model ?? 'mock');
    const said = lastUserText(body.messages);
    const reply = mock.reply ?? `Hello from Switchyard's mock provider (a demo, not a model). You said: ${said || '(nothing)'}`;
    const usage = { prompt_tokens: estimateTokens(JSON.stringify(body.messages ?? '')), completion_tokens: estimateTokens(reply) };
    const id = `chatcmpl-mock-${count}`;
    const created = Math.floor(Date.now() / 1000);
    if (body.stream !== true) {
      return jsonResponse(200, {
        id,
        object: 'chat.completion',
        created,
        model,
        system_fingerprint: 'switchyard-mock',
        choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop', logprobs: null }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      });
    }
    const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'switchyard-mock', choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] })}\n\n`;
    const words = reply.split(/(?<= )/);
    const signal = options.signal;
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
      body: (async function* () {
        yield encoder.encode(chunk({ role: 'assistant', content: '' }, null));
        for (const word of words) {
          if (mock.chunkDelayMs > 0) await sleep(mock.chunkDelayMs, undefined, signal ? { signal } : {});
          yield encoder.encode(chunk({ content: word }, null));
        }
        yield encoder.encode(chunk({}, 'stop'));
        if (includeUsage) {
          const total = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
          yield encoder.encode(
            `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: total })}\n\n`,
          );
        }
        yield encoder.encode('data: [DONE]\n\n');
      })(),
      cancel() {},
    };
  }
}

/** Creates the `mock` adapter with its own in-process transport. */
export function createMockAdapter(transport = new MockTransport()): ProviderAdapter & { transport: MockTransport } {
  return {
    kind: 'mock',
    family: 'openai-chat',
    requiresCredential: false,
    transport,
    buildRequest(provider, _credential, input) {
      transport.configure(provider);
      return {
        url: mockUrl(provider.name, 'chat/completions'),
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chatBody(input),
      };
    },
    healthRequest(provider) {
      transport.configure(provider);
      return { url: mockUrl(provider.name, 'models'), method: 'GET', headers: {} };
    },
    classify: classifyOpenAiError,
    usageFromResponse: openAiUsage,
    usageFromEvent: openAiUsage,
  };
}
