import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { CLIENT_KEY, lastRequest, type MatrixGateway, readSse, startMatrixGateway, WEATHER_TOOL } from './harness.js';

let gateway: MatrixGateway;
let client: OpenAI;
before(async () => {
  gateway = await startMatrixGateway();
  client = new OpenAI({ apiKey: CLIENT_KEY, baseURL: `${gateway.origin}/v1`, maxRetries: 0 });
});
after(() => gateway.close());

const tools = [{ type: 'function' as const, ...WEATHER_TOOL, strict: false }];

for (const family of ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'] as const) {
  describe(`OpenAI SDK responses → ${family} upstream`, () => {
    const model = () => gateway.upstream(family).model;

    test('responses.create: instructions, multi-turn input, output_text, status and usage', async () => {
      const response = await client.responses.create({
        model: model(),
        instructions: 'You are terse.',
        input: [
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: [{ type: 'input_text', text: 'second question' }] },
        ],
        max_output_tokens: 120,
      });
      assert.equal(response.object, 'response');
      assert.equal(response.status, 'completed');
      assert.equal(response.output_text, 'Echo: second question');
      assert.equal(response.usage?.input_tokens, 11);
      assert.equal(response.usage?.output_tokens, 7);
      const sent = lastRequest(gateway.upstream(family)).body!;
      if (family === 'anthropic-messages') assert.equal(sent.system, 'You are terse.');
      if (family === 'gemini') assert.deepEqual(sent.systemInstruction, { parts: [{ text: 'You are terse.' }] });
      if (family === 'openai-chat') assert.deepEqual((sent.messages as unknown[])[0], { role: 'system', content: 'You are terse.' });
    });

    test('responses.stream: typed events in order, final response with usage', async () => {
      const stream = client.responses.stream({ model: model(), input: 'one two three' });
      const types: string[] = [];
      let text = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.output_text.delta') text += event.delta;
      }
      const final = await stream.finalResponse();
      assert.equal(text, 'Echo: one two three');
      assert.equal(final.output_text, 'Echo: one two three');
      assert.equal(final.usage?.output_tokens, 7);
      assert.equal(types[0], 'response.created');
      assert.equal(types.at(-1), 'response.completed');
      for (const type of [
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.done',
        'response.output_item.done',
      ])
        assert.ok(types.includes(type), type);
    });

    test('function calls come back as function_call items, plain and streamed', async () => {
      const response = await client.responses.create({ model: model(), input: 'weather in Paris?', tools });
      const call = response.output.find((item) => item.type === 'function_call');
      assert.equal(call?.type === 'function_call' ? call.name : undefined, 'get_weather');
      assert.deepEqual(JSON.parse(call?.type === 'function_call' ? call.arguments : '{}'), { location: 'Paris' });
      const stream = client.responses.stream({ model: model(), input: 'weather in Paris?', tools });
      let args = '';
      for await (const event of stream) if (event.type === 'response.function_call_arguments.delta') args += event.delta;
      assert.deepEqual(JSON.parse(args), { location: 'Paris' });
      const final = await stream.finalResponse();
      const finalCall = final.output.find((item) => item.type === 'function_call');
      assert.equal(finalCall?.type === 'function_call' ? finalCall.call_id.length > 0 : false, true);
    });

    test('function_call_output items and input images go back up', async () => {
      await client.responses.create({
        model: model(),
        tools,
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'weather where this was taken?' },
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
            ],
          },
          { type: 'function_call', call_id: 'call_7', name: 'get_weather', arguments: '{"location":"Paris"}' },
          { type: 'function_call_output', call_id: 'call_7', output: 'windy' },
        ],
      });
      const sent = JSON.stringify(lastRequest(gateway.upstream(family)).body);
      assert.ok(sent.includes('windy'));
      const expected = {
        'openai-chat': ['"tool_call_id":"call_7"', '"url":"data:image/png;base64,iVBORw0KGgo="'],
        'openai-responses': ['"call_id":"call_7"', '"image_url":"data:image/png;base64,iVBORw0KGgo="'],
        'anthropic-messages': ['"tool_use_id":"call_7"', '"media_type":"image/png"'],
        gemini: ['"functionResponse":{"name":"get_weather"', '"inlineData":{"mimeType":"image/png"'],
      }[family];
      for (const fragment of expected) assert.ok(sent.includes(fragment), `${fragment} in ${sent}`);
    });

    test('an image inside a function_call_output reaches the upstream where it can hold one, and is named as dropped where not', async () => {
      const { response } = await client.responses
        .create({
          model: model(),
          tools,
          input: [
            { role: 'user', content: 'what does the camera see?' },
            { type: 'function_call', call_id: 'call_8', name: 'get_weather', arguments: '{"location":"Paris"}' },
            {
              type: 'function_call_output',
              call_id: 'call_8',
              output: [
                { type: 'input_text', text: 'one frame' },
                { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
              ],
            },
          ],
        })
        .withResponse();
      const sent = lastRequest(gateway.upstream(family)).body!;
      const dropped = response.headers.get('x-switchyard-dropped-fields') ?? '';
      if (family === 'openai-chat') {
        assert.deepEqual(
          (sent.messages as { role: string }[]).find((m) => m.role === 'tool'),
          {
            role: 'tool',
            tool_call_id: 'call_8',
            content: 'one frame',
          },
        );
        // Named by its place in the body this client sent: the second item of the function_call_output's output.
        assert.ok(dropped.split(', ').includes('input[2].output[1]'), dropped);
        return;
      }
      assert.doesNotMatch(dropped, /input\[2\]/);
      const text = JSON.stringify(sent);
      const expected = {
        'openai-responses':
          '"output":[{"type":"input_text","text":"one frame"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"}]',
        'anthropic-messages':
          '"content":[{"type":"text","text":"one frame"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]',
        gemini: '{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}',
      }[family];
      assert.ok(text.includes(expected), `${expected} in ${text}`);
    });

    test('an upstream client error is a BadRequestError', async () => {
      const fake = gateway.upstream(family).fake;
      fake.setBehaviour(() => ({ type: 'status', status: 400 }));
      try {
        await assert.rejects(client.responses.create({ model: model(), input: 'x' }), (error: unknown) => {
          assert.ok(error instanceof OpenAI.BadRequestError, String(error));
          assert.match(error.message, /fake upstream says 400/);
          return true;
        });
      } finally {
        fake.setBehaviour(undefined);
      }
    });

    test('a stream cut short upstream ends with an error event', async () => {
      const fake = gateway.upstream(family).fake;
      fake.setBehaviour(() => ({ type: 'cut', afterChunks: 1 }));
      try {
        const response = await fetch(`${gateway.origin}/v1/responses`, {
          method: 'POST',
          headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: model(), input: 'one two three four', stream: true }),
        });
        const events = await readSse(response);
        assert.equal(events.at(-1)?.event, 'error');
        const error = JSON.parse(events.at(-1)!.data) as { type: string; code: string; message: string };
        assert.equal(error.type, 'error');
        assert.equal(error.code, 'upstream_error');
        assert.equal(events.filter((e) => e.event === 'response.completed').length, 0);
      } finally {
        fake.setBehaviour(undefined);
      }
    });
  });
}

test('previous_response_id passes through to a Responses provider and is refused for others', async () => {
  const ok = await client.responses.create({
    model: gateway.upstream('openai-responses').model,
    input: 'x',
    previous_response_id: 'resp_123',
  });
  assert.equal(ok.status, 'completed');
  assert.equal(lastRequest(gateway.upstream('openai-responses')).body?.previous_response_id, 'resp_123');
  await assert.rejects(
    client.responses.create({ model: gateway.upstream('anthropic-messages').model, input: 'x', previous_response_id: 'resp_123' }),
    (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'previous_response_id',
  );
});
