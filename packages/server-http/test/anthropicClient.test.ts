import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { CLIENT_KEY, lastRequest, type MatrixGateway, startMatrixGateway, WEATHER_TOOL } from './harness.js';

let gateway: MatrixGateway;
let client: Anthropic;
before(async () => {
  gateway = await startMatrixGateway();
  client = new Anthropic({ apiKey: CLIENT_KEY, baseURL: gateway.origin, maxRetries: 0 });
});
after(() => gateway.close());

const tool = {
  name: WEATHER_TOOL.name,
  description: WEATHER_TOOL.description,
  input_schema: WEATHER_TOOL.parameters as Anthropic.Tool.InputSchema,
};

for (const family of ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'] as const) {
  describe(`Anthropic SDK client → ${family} upstream`, () => {
    const model = () => gateway.upstream(family).model;

    test('messages.create: system prompt, multi-turn, text answer, stop reason and usage', async () => {
      const message = await client.messages.create({
        model: model(),
        max_tokens: 256,
        system: 'You are terse.',
        messages: [
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: [{ type: 'text', text: 'second question' }] },
        ],
      });
      assert.equal(message.type, 'message');
      assert.equal(message.content[0]?.type === 'text' ? message.content[0].text : undefined, 'Echo: second question');
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.usage.input_tokens, 11);
      assert.equal(message.usage.output_tokens, 7);
      assert.equal(message.model, model());
      const sent = lastRequest(gateway.upstream(family));
      assert.ok(sent.body, 'the upstream received a JSON body');
      if (family === 'gemini') {
        assert.match(sent.path, /:generateContent$/);
        assert.deepEqual(sent.body.systemInstruction, { parts: [{ text: 'You are terse.' }] });
        assert.equal((sent.body.contents as unknown[]).length, 3);
      } else if (family === 'openai-chat') {
        assert.deepEqual((sent.body.messages as unknown[])[0], { role: 'system', content: 'You are terse.' });
        assert.equal(sent.body.max_tokens, 256);
      } else if (family === 'openai-responses') {
        assert.equal(sent.body.instructions, 'You are terse.');
        assert.equal(sent.body.max_output_tokens, 256);
      } else assert.equal(sent.body.system, 'You are terse.');
    });

    test('messages.stream: the full event sequence, text and usage', async () => {
      const stream = client.messages.stream({ model: model(), max_tokens: 64, messages: [{ role: 'user', content: 'one two three' }] });
      const types: string[] = [];
      stream.on('streamEvent', (event) => types.push(event.type));
      const message = await stream.finalMessage();
      assert.equal(message.content[0]?.type === 'text' ? message.content[0].text : undefined, 'Echo: one two three');
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.usage.output_tokens, 7);
      assert.equal(message.usage.input_tokens, 11);
      assert.equal(types[0], 'message_start');
      assert.equal(types.at(-1), 'message_stop');
      assert.equal(types.at(-2), 'message_delta');
      assert.ok(types.includes('content_block_start') && types.includes('content_block_delta') && types.includes('content_block_stop'));
    });

    test('tool use: definitions go up, a tool_use block comes back, plain and streamed', async () => {
      const message = await client.messages.create({
        model: model(),
        max_tokens: 64,
        tools: [tool],
        messages: [{ role: 'user', content: 'weather in Paris?' }],
      });
      const use = message.content.find((b) => b.type === 'tool_use');
      assert.equal(use?.type === 'tool_use' ? use.name : undefined, 'get_weather');
      assert.deepEqual(use?.type === 'tool_use' ? use.input : undefined, { location: 'Paris' });
      assert.equal(message.stop_reason, 'tool_use');
      const streamed = await client.messages
        .stream({ model: model(), max_tokens: 64, tools: [tool], messages: [{ role: 'user', content: 'weather in Paris?' }] })
        .finalMessage();
      const streamedUse = streamed.content.find((b) => b.type === 'tool_use');
      assert.deepEqual(streamedUse?.type === 'tool_use' ? streamedUse.input : undefined, { location: 'Paris' });
      assert.equal(streamed.stop_reason, 'tool_use');
    });

    test('tool results go back up with the conversation', async () => {
      const message = await client.messages.create({
        model: model(),
        max_tokens: 64,
        tools: [tool],
        messages: [
          { role: 'user', content: 'weather in Paris?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny, 21 C' }] },
        ],
      });
      assert.ok(message.content.length > 0);
      const sent = lastRequest(gateway.upstream(family)).body!;
      const text = JSON.stringify(sent);
      assert.ok(text.includes('sunny, 21 C'), 'the tool result reached the upstream');
      if (family === 'gemini') assert.ok(text.includes('"functionResponse":{"name":"get_weather","response":{"output":"sunny, 21 C"}}'));
      if (family === 'openai-chat') assert.ok(text.includes('"role":"tool","tool_call_id":"toolu_1"'));
      if (family === 'openai-responses') assert.ok(text.includes('"type":"function_call_output","call_id":"toolu_1"'));
    });

    test('an image inside a tool result reaches the upstream where it can hold one, and is named as dropped where not', async () => {
      const { response } = await client.messages
        .create({
          model: model(),
          max_tokens: 64,
          tools: [tool],
          messages: [
            { role: 'user', content: 'what does the camera see?' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { location: 'Paris' } }] },
            {
              role: 'user',
              content: [
                {
                  type: 'tool_result',
                  tool_use_id: 'toolu_2',
                  content: [
                    { type: 'text', text: 'one frame' },
                    { type: 'image', source: { type: 'url', url: 'https://example.com/frame.jpg' } },
                  ],
                },
              ],
            },
          ],
        })
        .withResponse();
      const text = JSON.stringify(lastRequest(gateway.upstream(family)).body);
      const dropped = response.headers.get('x-switchyard-dropped-fields') ?? '';
      if (family === 'openai-chat') {
        assert.ok(text.includes('"role":"tool","tool_call_id":"toolu_2","content":"one frame"'), text);
        // Named by its place in the body this client sent: the image block inside the first tool_result.
        assert.ok(dropped.split(', ').includes('messages[2].content[0].content[1]'), dropped);
        return;
      }
      assert.doesNotMatch(dropped, /messages\[2\]/);
      const expected = {
        'openai-responses': '{"type":"input_image","image_url":"https://example.com/frame.jpg","detail":"auto"}',
        'anthropic-messages': '{"type":"image","source":{"type":"url","url":"https://example.com/frame.jpg"}}',
        gemini: '"fileData":{"mimeType":"image/jpeg","fileUri":"https://example.com/frame.jpg"}',
      }[family];
      assert.ok(text.includes(expected), `${expected} in ${text}`);
    });

    test('an image (base64 and URL) reaches the upstream in its own shape', async () => {
      await client.messages.create({
        model: model(),
        max_tokens: 16,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
              { type: 'text', text: 'what is this?' },
            ],
          },
        ],
      });
      const text = JSON.stringify(lastRequest(gateway.upstream(family)).body);
      const expected = {
        'openai-chat': ['"url":"data:image/png;base64,iVBORw0KGgo="', '"url":"https://example.com/cat.jpg"'],
        'openai-responses': ['"image_url":"data:image/png;base64,iVBORw0KGgo="', '"image_url":"https://example.com/cat.jpg"'],
        'anthropic-messages': ['"media_type":"image/png"', '"url":"https://example.com/cat.jpg"'],
        gemini: [
          '"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}',
          '"fileData":{"mimeType":"image/jpeg","fileUri":"https://example.com/cat.jpg"}',
        ],
      }[family];
      for (const fragment of expected) assert.ok(text.includes(fragment), `${fragment} in ${text}`);
    });

    test('an upstream client error arrives as an Anthropic BadRequestError with the upstream message', async () => {
      const fake = gateway.upstream(family).fake;
      fake.setBehaviour(() => ({ type: 'status', status: 400 }));
      try {
        await assert.rejects(
          client.messages.create({ model: model(), max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
          (error: unknown) => {
            assert.ok(error instanceof Anthropic.BadRequestError, String(error));
            assert.match(error.message, /fake upstream says 400/);
            return true;
          },
        );
      } finally {
        fake.setBehaviour(undefined);
      }
    });

    test('an upstream that cuts the stream short ends it with an Anthropic error event', async () => {
      const fake = gateway.upstream(family).fake;
      fake.setBehaviour(() => ({ type: 'cut', afterChunks: 1 }));
      try {
        const stream = client.messages.stream({
          model: model(),
          max_tokens: 64,
          messages: [{ role: 'user', content: 'one two three four' }],
        });
        await assert.rejects(stream.finalMessage(), (error: unknown) => {
          assert.ok(error instanceof Anthropic.APIError, String(error));
          return true;
        });
      } finally {
        fake.setBehaviour(undefined);
      }
    });
  });
}

test('count_tokens is answered by Anthropic and Gemini upstreams and estimated for OpenAI ones', async () => {
  const counts: Record<string, { tokens: number; estimate: boolean }> = {};
  for (const upstream of gateway.upstreams) {
    const response = await fetch(`${gateway.origin}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': CLIENT_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: upstream.model, messages: [{ role: 'user', content: 'count these words please' }] }),
    });
    assert.equal(response.status, 200, upstream.family);
    const body = (await response.json()) as { input_tokens: number };
    counts[upstream.family] = { tokens: body.input_tokens, estimate: response.headers.get('x-switchyard-token-count') === 'estimate' };
    assert.ok(body.input_tokens > 0);
  }
  assert.equal(counts['anthropic-messages']?.estimate, false);
  assert.equal(counts.gemini?.estimate, false);
  assert.equal(counts['openai-chat']?.estimate, true);
  assert.equal(counts['openai-responses']?.estimate, true);
  assert.match(lastRequest(gateway.upstream('gemini')).path, /:countTokens$/);
});

test('GET /v1/models answers in Anthropic’s shape when the request carries anthropic-version', async () => {
  const ids: string[] = [];
  for await (const model of client.models.list()) {
    assert.equal(model.type, 'model');
    ids.push(model.id);
  }
  assert.deepEqual(ids.sort(), gateway.upstreams.map((u) => u.model).sort());
  const one = await client.models.retrieve(gateway.upstream('gemini').model);
  assert.equal(one.id, gateway.upstream('gemini').model);
  const openAiShape = (await (
    await fetch(`${gateway.origin}/v1/models`, { headers: { authorization: `Bearer ${CLIENT_KEY}` } })
  ).json()) as { object: string };
  assert.equal(openAiShape.object, 'list');
});

test('bad Anthropic input is a 400 in Anthropic’s shape naming the field', async () => {
  for (const [body, field] of [
    [{ messages: [] }, 'model'],
    [{ model: 'x', messages: 'no' }, 'messages'],
    [{ model: 'x', messages: [], max_tokens: -1 }, 'max_tokens'],
    [{ model: gateway.upstream('gemini').model, max_tokens: 5, messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
  ] as const) {
    const response = await fetch(`${gateway.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': CLIENT_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 400, field);
    const error = (await response.json()) as { type: string; error: { type: string; param?: string } };
    assert.equal(error.type, 'error');
    assert.equal(error.error.type, 'invalid_request_error');
    assert.equal(error.error.param, field);
  }
});
