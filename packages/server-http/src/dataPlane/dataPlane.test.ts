import assert from 'node:assert/strict';
import { Agent, type ClientRequest, createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import type { RequestEndEvent, RequestStartEvent } from '@switchyard/core-routing';
import type { ClientKeyEntry } from '@switchyard/http-kit';
import { type ProviderConfig, Relay, UndiciTransport } from '@switchyard/relay';
import { eventually, type FakeOpenAi, startFakeOpenAi } from '@switchyard/test-support';
import OpenAI from 'openai';
import { createDataPlane } from './dataPlane.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function gateway(providers: ProviderConfig[], apiKeys: ClientKeyEntry[] = ['sk-test-1']) {
  const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
  const relay = new Relay({ providers, transport });
  const dataPlane = createDataPlane({ relay, apiKeys, maxBodyBytes: 64 * 1024 });
  const server: Server = createServer(async (req, res) => {
    if (!(await dataPlane.handle(req, res))) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await transport.close();
  });
  const baseURL = `http://127.0.0.1:${port}/v1`;
  const first = apiKeys[0];
  const apiKey = typeof first === 'string' ? first : (first?.key ?? 'none');
  return { relay, baseURL, client: new OpenAI({ apiKey, baseURL, maxRetries: 0 }) };
}

async function fake(options?: Parameters<typeof startFakeOpenAi>[0]): Promise<FakeOpenAi> {
  const upstream = await startFakeOpenAi(options);
  cleanups.push(() => upstream.close());
  return upstream;
}

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather in a city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

describe('data plane with the official openai client', async () => {
  const upstream = await fake({ models: ['gpt-4o'] });
  const { client, baseURL } = await gateway([
    { name: 'primary', kind: 'openai-compatible', baseUrl: upstream.url, models: ['gpt-4o', 'gpt-4o-*'], aliases: { fast: 'gpt-4o-mini' } },
    { name: 'demo', kind: 'mock', models: ['demo-model'] },
  ]);

  test('non-streaming chat completion', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Say hi' }] });
    assert.equal(completion.choices[0]?.message.content, 'Echo: Say hi');
    assert.equal(completion.usage?.total_tokens, 18);
  });

  test('a non-streamed answer goes out with its content-length, not in chunked encoding', async () => {
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test-1', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Say hi' }] }),
    });
    const body = Buffer.from(await response.arrayBuffer());
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-length'), String(body.length));
    assert.equal(response.headers.get('transfer-encoding'), null);
    assert.equal((JSON.parse(body.toString('utf8')) as { usage: { total_tokens: number } }).usage.total_tokens, 18);
  });

  test('the mock provider answers through the client too', async () => {
    const completion = await client.chat.completions.create({ model: 'demo-model', messages: [{ role: 'user', content: 'ping' }] });
    assert.match(completion.choices[0]?.message.content ?? '', /mock provider/);
  });

  test('streaming chat completion, chunk by chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
    });
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
    }
    assert.equal(text, 'Echo: one two three');
    assert.ok(chunks >= 4);
  });

  test('streaming with include_usage delivers the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    assert.deepEqual(usage, { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  });

  test('tool definitions go up and tool calls come back, plain and streamed', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [weatherTool],
    });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    assert.equal(call?.type === 'function' ? call.function.name : undefined, 'get_weather');
    assert.equal(completion.choices[0]?.finish_reason, 'tool_calls');
    const sentTools = upstream.requests.at(-1)?.body?.tools as unknown[] | undefined;
    assert.deepEqual(sentTools?.[0], weatherTool);
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [weatherTool],
      stream: true,
    });
    let args = '';
    let name = '';
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.tool_calls?.[0];
      name += delta?.function?.name ?? '';
      args += delta?.function?.arguments ?? '';
    }
    assert.equal(name, 'get_weather');
    assert.deepEqual(JSON.parse(args), { location: 'Paris' });
  });

  test('models list is the union of the providers, aliases included, globs left out', async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    assert.deepEqual(models.sort(), ['demo-model', 'fast', 'gpt-4o']);
  });

  test('an unknown model is a NotFoundError with code model_not_found', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.NotFoundError);
        assert.equal(error.code, 'model_not_found');
        return true;
      },
    );
  });

  test('a wrong or missing key is a 401 AuthenticationError', async () => {
    const wrong = new OpenAI({ apiKey: 'sk-wrong', baseURL, maxRetries: 0 });
    await assert.rejects(wrong.chat.completions.create({ model: 'gpt-4o', messages: [] }), OpenAI.AuthenticationError);
    const response = await fetch(`${baseURL}/models`);
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
  });
});

describe('data plane: errors the client can act on', async () => {
  const { client, relay, baseURL } = await gateway([{ name: 'm', kind: 'mock', models: ['m'] }]);

  test('every provider cooling down is a RateLimitError with Retry-After', async () => {
    relay.table.route('m');
    relay.table.markUnavailable('m', 'cooldown', Date.now() + 30_000);
    try {
      await assert.rejects(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.RateLimitError);
        assert.equal(error.code, 'all_providers_in_cooldown');
        const retryAfter = Number(error.headers?.get?.('retry-after'));
        assert.ok(retryAfter >= 29 && retryAfter <= 30, `retry-after ${retryAfter}`);
        return true;
      });
    } finally {
      relay.table.markAvailable('m');
    }
  });

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test-1', 'content-type': 'application/json', ...headers },
      body,
    });

  test('bad input is a 4xx naming the field, never a 500', async () => {
    const cases: [string, Record<string, string>, number, string | null][] = [
      ['{not json', {}, 400, null],
      ['[1,2]', {}, 400, null],
      ['{"messages":[]}', {}, 400, 'model'],
      ['{"model":"m"}', {}, 400, 'messages'],
      ['{"model":"m","messages":[],"stream":"yes"}', {}, 400, 'stream'],
      ['{"model":"m","messages":[]}', { 'content-type': 'text/plain' }, 415, null],
      [JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(70_000) }] }), {}, 413, null],
    ];
    for (const [body, headers, status, param] of cases) {
      const response = await post(body, headers);
      assert.equal(response.status, status, body.slice(0, 40));
      const error = ((await response.json()) as { error: { param: string | null; message: unknown } }).error;
      assert.equal(error.param, param);
      assert.equal(typeof error.message, 'string');
    }
  });

  test('wrong method and unknown route are 405 and 404 in the OpenAI shape', async () => {
    const get = await fetch(`${baseURL}/chat/completions`, { headers: { authorization: 'Bearer sk-test-1' } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    const unknown = await fetch(`${baseURL}/nothing`, { headers: { authorization: 'Bearer sk-test-1' } });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { error: { code: string } }).error.code, 'not_found');
  });

  test('a safe X-Request-Id is echoed; an unsafe one is replaced', async () => {
    const echoed = await post('{"model":"m","messages":[]}', { 'x-request-id': 'trace-123' });
    assert.equal(echoed.headers.get('x-request-id'), 'trace-123');
    const replaced = await post('{"model":"m","messages":[]}', { 'x-request-id': 'bad id <script>' });
    assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});

test('with no api-keys configured, /v1 is open', async () => {
  const { baseURL } = await gateway([{ name: 'm', kind: 'mock', models: ['m'] }], []);
  const response = await fetch(`${baseURL}/models`);
  assert.equal(response.status, 200);
});

test('a client that leaves before its answer aborts the upstream call; requests on other connections are untouched', async () => {
  // An upstream that holds non-streaming answers until told, and notes the calls that were abandoned.
  let abandoned = 0;
  const held: ServerResponse[] = [];
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push(res));
    res.on('close', () => {
      if (!res.writableFinished) abandoned++;
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  });
  const { baseURL } = await gateway([
    {
      name: 'slow',
      kind: 'openai-compatible',
      baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`,
      models: ['slow'],
    },
  ]);
  const body = JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'take your time' }] });
  const send = (agent: Agent) =>
    new Promise<ClientRequest>((resolve) => {
      const req = request(`${baseURL}/chat/completions`, {
        method: 'POST',
        agent,
        headers: { authorization: 'Bearer sk-test-1', 'content-type': 'application/json' },
      });
      req.on('error', () => undefined);
      req.end(body, () => resolve(req));
    });
  const leaving = new Agent({ keepAlive: true });
  const staying = new Agent({ keepAlive: true });
  cleanups.push(async () => {
    leaving.destroy();
    staying.destroy();
  });
  const gone = await send(leaving);
  const kept = await send(staying);
  const answered = new Promise<number>((resolve) =>
    kept.on('response', (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0))),
  );
  await eventually('both calls to reach the upstream', () => held.length === 2);
  gone.destroy();
  await eventually('the abandoned call to be aborted upstream', () => abandoned === 1);
  for (const res of held)
    if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [] }));
  assert.equal(await answered, 200);
  assert.equal(abandoned, 1, 'only the call of the client that left');
});

describe('hostile model names', async () => {
  const { baseURL } = await gateway([{ name: 'demo', kind: 'mock', models: ['demo-*'] }]);
  const origin = baseURL.replace(/\/v1$/, '');
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${origin}${path}`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test-1', 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const messages = [{ role: 'user', content: 'hi' }];

  test('a model name over 256 characters gets a 400 naming the field, in the client family’s error shape', async () => {
    const long = `demo-${'x'.repeat(252)}`;
    assert.equal(long.length, 257);
    const chat = await post('/v1/chat/completions', { model: long, messages });
    assert.equal(chat.status, 400);
    const chatError = ((await chat.json()) as { error: { param: string; message: string } }).error;
    assert.equal(chatError.param, 'model');
    assert.match(chatError.message, /at most 256 characters/);

    const anthropic = await post('/v1/messages', { model: long, max_tokens: 10, messages }, { 'anthropic-version': '2023-06-01' });
    assert.equal(anthropic.status, 400);
    const anthropicBody = (await anthropic.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(anthropicBody.type, 'error');
    assert.equal(anthropicBody.error.type, 'invalid_request_error');
    assert.match(anthropicBody.error.message, /at most 256 characters/);

    const responses = await post('/v1/responses', { model: long, input: 'hi' });
    assert.equal(responses.status, 400);

    // 256 characters is a name like any other: served, since the glob matches it.
    const atLimit = await post('/v1/chat/completions', { model: long.slice(0, 256), messages });
    assert.equal(atLimit.status, 200, await atLimit.text());
  });
});

describe('who sent a request: the client key by identity, on the relay events', async () => {
  const keys: ClientKeyEntry[] = [
    { key: 'sk-alice-0123456789', name: 'alice', tenant: 'team-a' },
    { key: 'sk-bob-0123456789', name: 'bob' },
    'sk-anonymous-0123456789',
  ];
  const { relay, baseURL } = await gateway([{ name: 'demo', kind: 'mock', models: ['demo-model'] }], keys);
  const starts: RequestStartEvent[] = [];
  const ends: RequestEndEvent[] = [];
  relay.events.on('request:start', (event) => starts.push(event));
  relay.events.on('request:end', (event) => ends.push(event));
  const ask = (apiKey: string) =>
    new OpenAI({ apiKey, baseURL, maxRetries: 0 }).chat.completions.create({
      model: 'demo-model',
      messages: [{ role: 'user', content: 'hi' }],
    });

  test('a named key with a tenant, a named key without one, and a bare key (known by its position)', async () => {
    await ask('sk-alice-0123456789');
    await ask('sk-bob-0123456789');
    await ask('sk-anonymous-0123456789');
    const expected = [
      { keyId: 'static:alice', name: 'alice', tenant: 'team-a' },
      { keyId: 'static:bob', name: 'bob', tenant: 'default' },
      { keyId: 'static:key-3', name: 'key-3', tenant: 'default' },
    ];
    assert.deepEqual(
      starts.map((event) => event.client),
      expected,
    );
    assert.deepEqual(
      ends.map((event) => event.client),
      expected,
    );
    assert.ok(!JSON.stringify(ends).includes('sk-'), 'no event carries any part of a key');
  });
});

test('an open /v1 (no api-keys): the events name no client', async () => {
  const { relay, baseURL } = await gateway([{ name: 'demo', kind: 'mock', models: ['demo-model'] }], []);
  const ends: RequestEndEvent[] = [];
  relay.events.on('request:end', (event) => ends.push(event));
  await new OpenAI({ apiKey: 'anything', baseURL, maxRetries: 0 }).chat.completions.create({
    model: 'demo-model',
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.deepEqual(
    ends.map((event) => event.client),
    [null],
  );
});
