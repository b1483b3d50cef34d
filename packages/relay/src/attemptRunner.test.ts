import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RequestEndEvent } from '@switchyard/core-routing';
import { TranslationError } from '@switchyard/translate';
import { AdapterRegistry, type ProviderAdapter, type Transport } from './providers/adapter.js';
import { openAiCompatibleAdapter } from './providers/openai.js';
import { Relay } from './relay.js';
import { MemorySink } from './sink.js';
import type { RelayRequest, UpstreamRequest, UpstreamResponse } from './types.js';

/** An embedder's adapter whose reading of the provider's answer fails as the translators say a bad answer fails. */
const pickyAdapter: ProviderAdapter = {
  ...openAiCompatibleAdapter,
  kind: 'picky',
  usageFromResponse() {
    throw new TranslationError('invalid_response', 'the provider returned tool call arguments that are not JSON (tool lookup)');
  },
};

/** Answers every request with one chat completion, and remembers where each went. */
class CompletionTransport implements Transport {
  readonly urls: string[] = [];
  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    this.urls.push(request.url);
    const body = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    };
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: (async function* () {
        yield Buffer.from(JSON.stringify(body));
      })(),
      cancel() {},
    };
  }
}

function chatRequest(): RelayRequest {
  const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
  return { requestId: 'req-1', ingress: 'openai-chat', model: 'm', stream: false, body, rawBody: Buffer.from(JSON.stringify(body)) };
}

function relayWith(providers: { name: string; kind: string; priority: number }[], transport: Transport): Relay {
  return new Relay({
    providers: providers.map((p) => ({ ...p, baseUrl: `http://127.0.0.1:1/${p.name}`, models: ['m'] })),
    adapters: new AdapterRegistry([pickyAdapter, openAiCompatibleAdapter]),
    strategy: 'priority',
    transport,
    maxAttempts: 2,
  });
}

describe('attempt runner: a TranslationError', () => {
  test("invalid_response (the provider's answer) is an upstream failure, a 502 upstream_error, never a 400", async () => {
    const relay = relayWith([{ name: 'picky', kind: 'picky', priority: 0 }], new CompletionTransport());
    const sink = new MemorySink();
    const end = await relay.handle(chatRequest(), sink);
    assert.equal(sink.status, 502);
    const error = (JSON.parse(sink.text()) as { error: { code: string; type: string; message: string } }).error;
    assert.equal(error.code, 'upstream_error');
    assert.equal(error.type, 'server_error');
    assert.match(error.message, /not JSON/);
    assert.equal(end.errorType, 'server');
  });

  test('invalid_response is retried on another provider, like any bad upstream answer', async () => {
    const transport = new CompletionTransport();
    const relay = relayWith(
      [
        { name: 'picky', kind: 'picky', priority: 0 },
        { name: 'good', kind: 'openai-compatible', priority: 1 },
      ],
      transport,
    );
    const ends: RequestEndEvent[] = [];
    relay.events.on('request:end', (e) => ends.push(e));
    const sink = new MemorySink();
    await relay.handle(chatRequest(), sink);
    assert.equal(sink.status, 200);
    assert.deepEqual(
      transport.urls.map((url) => new URL(url).pathname.split('/')[1]),
      ['picky', 'good'],
    );
    assert.equal(ends[0]?.provider, 'good');
    assert.equal(ends[0]?.attempts, 2);
  });

  test("a request that cannot be translated (unsupported_translation: n > 1 to Anthropic) is still the client's 400, and not retried", async () => {
    const transport = new CompletionTransport();
    const relay = new Relay({
      providers: [{ name: 'claude', kind: 'anthropic', models: ['m'], baseUrl: 'http://127.0.0.1:1' }],
      transport,
      credentials: {
        pool: () => ({
          acquire: () => ({ id: 'k1', token: 't' }),
          reportSuccess() {},
          reportUsage() {},
          reportFailure() {},
          refresh: async () => ({ id: 'k1', token: 't' }),
        }),
      },
    });
    const body = { model: 'm', n: 2, messages: [{ role: 'user', content: 'hi' }] };
    const sink = new MemorySink();
    await relay.handle({ ...chatRequest(), body, rawBody: Buffer.from(JSON.stringify(body)) }, sink);
    assert.equal(sink.status, 400);
    assert.equal(transport.urls.length, 0);
  });
});
