import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { CLIENT_KEY, lastRequest, type MatrixGateway, startMatrixGateway, WEATHER_TOOL } from './harness.js';

let gateway: MatrixGateway;
let client: OpenAI;
before(async () => {
  gateway = await startMatrixGateway();
  client = new OpenAI({ apiKey: CLIENT_KEY, baseURL: `${gateway.origin}/v1`, maxRetries: 0 });
});
after(() => gateway.close());

const tools = [{ type: 'function' as const, function: WEATHER_TOOL }];

for (const family of ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'] as const) {
  describe(`OpenAI SDK chat.completions → ${family} upstream`, () => {
    const model = () => gateway.upstream(family).model;

    test('non-streaming: system prompt, multi-turn, answer, finish reason and usage', async () => {
      const completion = await client.chat.completions.create({
        model: model(),
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: 'second question' },
        ],
        max_tokens: 100,
        temperature: 0.2,
        stop: ['END'],
      });
      assert.equal(completion.choices[0]?.message.content, 'Echo: second question');
      assert.equal(completion.choices[0]?.finish_reason, 'stop');
      assert.equal(completion.usage?.prompt_tokens, 11);
      assert.equal(completion.usage?.completion_tokens, 7);
      assert.equal(completion.usage?.total_tokens, 18);
      assert.equal(completion.model, model());
      const sent = lastRequest(gateway.upstream(family)).body!;
      if (family === 'anthropic-messages') {
        assert.equal(sent.system, 'You are terse.');
        assert.deepEqual(sent.stop_sequences, ['END']);
        assert.equal(sent.max_tokens, 100);
      } else if (family === 'gemini') {
        assert.deepEqual(sent.generationConfig, { maxOutputTokens: 100, temperature: 0.2, stopSequences: ['END'] });
      } else if (family === 'openai-responses') {
        assert.equal(sent.instructions, 'You are terse.');
      }
    });

    test('streaming: chunks, [DONE], and the usage chunk when asked for', async () => {
      const stream = await client.chat.completions.create({
        model: model(),
        messages: [{ role: 'user', content: 'one two three' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let finish: string | null | undefined;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish ??= chunk.choices[0]?.finish_reason;
        if (chunk.usage) usage = chunk.usage;
      }
      assert.equal(text, 'Echo: one two three');
      assert.equal(finish, 'stop');
      assert.equal(usage?.prompt_tokens, 11);
      assert.equal(usage?.completion_tokens, 7);
    });

    test('streaming without include_usage ends with [DONE] and no usage chunk', async () => {
      const response = await fetch(`${gateway.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: model(), messages: [{ role: 'user', content: 'hi' }], stream: true }),
      });
      const text = await response.text();
      assert.ok(text.endsWith('data: [DONE]\n\n'), text.slice(-80));
      assert.equal(text.includes('"usage"'), false);
      assert.equal(/data: *\n/.test(text), false, 'no empty data frames');
    });

    test('tools: a tool call comes back with its arguments, plain and streamed', async () => {
      const completion = await client.chat.completions.create({ model: model(), messages: [{ role: 'user', content: 'weather?' }], tools });
      const call = completion.choices[0]?.message.tool_calls?.[0];
      assert.equal(call?.type === 'function' ? call.function.name : undefined, 'get_weather');
      assert.deepEqual(JSON.parse(call?.type === 'function' ? call.function.arguments : '{}'), { location: 'Paris' });
      assert.equal(completion.choices[0]?.finish_reason, 'tool_calls');
      const stream = await client.chat.completions.create({
        model: model(),
        messages: [{ role: 'user', content: 'weather?' }],
        tools,
        stream: true,
      });
      let name = '';
      let args = '';
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta.tool_calls?.[0];
        name += delta?.function?.name ?? '';
        args += delta?.function?.arguments ?? '';
        finish ??= chunk.choices[0]?.finish_reason;
      }
      assert.equal(name, 'get_weather');
      assert.deepEqual(JSON.parse(args), { location: 'Paris' });
      assert.equal(finish, 'tool_calls');
      const sent = JSON.stringify(lastRequest(gateway.upstream(family)).body);
      const declared = {
        'openai-chat': '"function":{"name":"get_weather"',
        'openai-responses': '"type":"function","name":"get_weather"',
        'anthropic-messages': '"input_schema":{"type":"object"',
        gemini: '"functionDeclarations":[{"name":"get_weather"',
      }[family];
      assert.ok(sent.includes(declared), sent);
    });

    test('tool results and images go back up', async () => {
      await client.chat.completions.create({
        model: model(),
        tools,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'weather where this photo was taken?' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
              { type: 'image_url', image_url: { url: 'https://example.com/photo.png' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_9', content: 'rain' },
        ],
      });
      const sent = JSON.stringify(lastRequest(gateway.upstream(family)).body);
      assert.ok(sent.includes('rain'));
      const expected = {
        'openai-chat': ['"tool_call_id":"call_9"', 'data:image/jpeg;base64,/9j/4AAQ'],
        'openai-responses': [
          '"type":"function_call","call_id":"call_9"',
          '"type":"function_call_output","call_id":"call_9","output":"rain"',
        ],
        'anthropic-messages': [
          '"type":"tool_use","id":"call_9"',
          '"type":"tool_result","tool_use_id":"call_9"',
          '"type":"url","url":"https://example.com/photo.png"',
        ],
        gemini: [
          '"functionCall":{"name":"get_weather","args":{"location":"Paris"}}',
          '"functionResponse":{"name":"get_weather","response":{"output":"rain"}}',
          '"inlineData":{"mimeType":"image/jpeg"',
        ],
      }[family];
      for (const fragment of expected) assert.ok(sent.includes(fragment), `${fragment} in ${sent}`);
    });

    test('an upstream client error is an OpenAI BadRequestError; a rate limit a RateLimitError', async () => {
      const fake = gateway.upstream(family).fake;
      fake.setBehaviour(() => ({ type: 'status', status: 400 }));
      try {
        await assert.rejects(
          client.chat.completions.create({ model: model(), messages: [{ role: 'user', content: 'x' }] }),
          (error: unknown) => {
            assert.ok(error instanceof OpenAI.BadRequestError, String(error));
            assert.match(error.message, /fake upstream says 400/);
            return true;
          },
        );
        fake.setBehaviour(() => ({ type: 'status', status: 429, headers: { 'retry-after': '7' } }));
        await assert.rejects(
          client.chat.completions.create({ model: model(), messages: [{ role: 'user', content: 'x' }] }),
          (error: unknown) => {
            assert.ok(error instanceof OpenAI.RateLimitError, String(error));
            assert.equal(error.headers?.get('retry-after'), '7');
            return true;
          },
        );
      } finally {
        fake.setBehaviour(undefined);
      }
    });

    test('a stream cut short upstream ends with an error event the SDK raises', async () => {
      const fake = gateway.upstream(family).fake;
      fake.setBehaviour(() => ({ type: 'cut', afterChunks: 1 }));
      try {
        const stream = await client.chat.completions.create({
          model: model(),
          messages: [{ role: 'user', content: 'one two three four' }],
          stream: true,
        });
        await assert.rejects(
          (async () => {
            for await (const _ of stream);
          })(),
          (error: unknown) => error instanceof OpenAI.APIError,
        );
      } finally {
        fake.setBehaviour(undefined);
      }
    });
  });
}

test('n > 1 cannot be translated: a 400 naming n, before any upstream call', async () => {
  const before = gateway.upstream('anthropic-messages').fake.requests.length;
  await assert.rejects(
    client.chat.completions.create({
      model: gateway.upstream('anthropic-messages').model,
      n: 2,
      messages: [{ role: 'user', content: 'x' }],
    }),
    (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.param, 'n');
      assert.equal(error.code, 'unsupported_translation');
      return true;
    },
  );
  assert.equal(gateway.upstream('anthropic-messages').fake.requests.length, before);
});

test('fields the upstream family cannot express are named in x-switchyard-dropped-fields', async () => {
  const response = await fetch(`${gateway.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: gateway.upstream('anthropic-messages').model,
      messages: [{ role: 'user', content: 'x' }],
      seed: 7,
      logit_bias: { 1: 2 },
    }),
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-switchyard-dropped-fields'), 'logit_bias, seed');
});

test('a field name that could break a header is made printable in x-switchyard-dropped-fields', async () => {
  const response = await fetch(`${gateway.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: gateway.upstream('gemini').model,
      messages: [{ role: 'user', content: 'x' }],
      'evil\r\nx-injected: 1': true,
      ünïcode: 1,
    }),
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-injected'), null);
  assert.equal(response.headers.get('x-switchyard-dropped-fields'), 'evil??x-injected: 1, ?n?code');
});
