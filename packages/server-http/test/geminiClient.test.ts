import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CLIENT_KEY, lastRequest, type MatrixGateway, readSse, startMatrixGateway, WEATHER_TOOL } from './harness.js';

let gateway: MatrixGateway;
before(async () => {
  gateway = await startMatrixGateway();
});
after(() => gateway.close());

/** Gemini's REST shape, called with plain fetch as its REST reference shows. */
function call(model: string, action: string, body: unknown, query = '') {
  return fetch(`${gateway.origin}/v1beta/models/${model}:${action}${query}`, {
    method: 'POST',
    headers: { 'x-goog-api-key': CLIENT_KEY, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const tools = [
  { functionDeclarations: [{ name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.parameters }] },
];

interface Candidate {
  content: { role: string; parts: { text?: string; functionCall?: { name: string; args: unknown } }[] };
  finishReason?: string;
}
interface GenerateContentResponse {
  candidates: Candidate[];
  usageMetadata?: { promptTokenCount: number; candidatesTokenCount: number; totalTokenCount: number };
}

for (const family of ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'] as const) {
  describe(`Gemini REST client → ${family} upstream`, () => {
    const model = () => gateway.upstream(family).model;

    test('generateContent: systemInstruction, multi-turn, answer, finishReason and usageMetadata', async () => {
      const response = await call(model(), 'generateContent', {
        systemInstruction: { parts: [{ text: 'You are terse.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'first question' }] },
          { role: 'model', parts: [{ text: 'first answer' }] },
          { role: 'user', parts: [{ text: 'second question' }] },
        ],
        generationConfig: { maxOutputTokens: 50, temperature: 0.5 },
      });
      assert.equal(response.status, 200);
      const body = (await response.json()) as GenerateContentResponse;
      assert.equal(body.candidates[0]?.content.parts[0]?.text, 'Echo: second question');
      assert.equal(body.candidates[0]?.finishReason, 'STOP');
      const { promptTokenCount, candidatesTokenCount, totalTokenCount } = body.usageMetadata ?? {};
      assert.deepEqual(
        { promptTokenCount, candidatesTokenCount, totalTokenCount },
        { promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 },
      );
      const sent = lastRequest(gateway.upstream(family)).body!;
      if (family === 'anthropic-messages') {
        assert.equal(sent.system, 'You are terse.');
        assert.equal(sent.max_tokens, 50);
      }
      if (family === 'openai-chat') assert.equal((sent.messages as unknown[]).length, 4);
    });

    test('streamGenerateContent?alt=sse: chunks, then one with finishReason and usage; no empty frames', async () => {
      const response = await call(
        model(),
        'streamGenerateContent',
        { contents: [{ role: 'user', parts: [{ text: 'one two three' }] }] },
        '?alt=sse',
      );
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
      const events = await readSse(response);
      assert.ok(events.length >= 2);
      const chunks = events.map((e) => JSON.parse(e.data) as GenerateContentResponse);
      const text = chunks.map((c) => c.candidates[0]?.content.parts.map((p) => p.text ?? '').join('') ?? '').join('');
      assert.equal(text, 'Echo: one two three');
      assert.equal(chunks.at(-1)?.candidates[0]?.finishReason, 'STOP');
      assert.equal(chunks.at(-1)?.usageMetadata?.totalTokenCount, 18);
      assert.ok(events.every((e) => e.data.length > 0));
    });

    test('function calls: declarations go up, a whole functionCall comes back, plain and streamed', async () => {
      const contents = [{ role: 'user', parts: [{ text: 'weather in Paris?' }] }];
      const plain = (await (await call(model(), 'generateContent', { contents, tools })).json()) as GenerateContentResponse;
      assert.deepEqual(plain.candidates[0]?.content.parts.find((p) => p.functionCall)?.functionCall?.args, { location: 'Paris' });
      assert.equal(plain.candidates[0]?.content.parts.find((p) => p.functionCall)?.functionCall?.name, 'get_weather');
      const events = await readSse(await call(model(), 'streamGenerateContent', { contents, tools }, '?alt=sse'));
      const calls = events.flatMap(
        (e) => (JSON.parse(e.data) as GenerateContentResponse).candidates[0]?.content.parts.filter((p) => p.functionCall) ?? [],
      );
      assert.equal(calls.length, 1, 'the call arrives whole, once');
      assert.deepEqual(calls[0]?.functionCall?.args, { location: 'Paris' });
    });

    test('functionResponse parts and inline images go back up', async () => {
      await call(model(), 'generateContent', {
        tools,
        contents: [
          { role: 'user', parts: [{ text: 'weather here?' }, { inlineData: { mimeType: 'image/webp', data: 'UklGRg==' } }] },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'foggy' } } }] },
        ],
      });
      const sent = JSON.stringify(lastRequest(gateway.upstream(family)).body);
      assert.ok(sent.includes('foggy'));
      const expected = {
        'openai-chat': ['"role":"tool","tool_call_id":"call_0","content":"foggy"', '"url":"data:image/webp;base64,UklGRg=="'],
        'openai-responses': [
          '"type":"function_call_output","call_id":"call_0","output":"foggy"',
          '"image_url":"data:image/webp;base64,UklGRg=="',
        ],
        'anthropic-messages': ['"type":"tool_result","tool_use_id":"call_0"', '"media_type":"image/webp"'],
        gemini: ['"functionResponse":{"name":"get_weather","response":{"output":"foggy"}}', '"inlineData":{"mimeType":"image/webp"'],
      }[family];
      for (const fragment of expected) assert.ok(sent.includes(fragment), `${fragment} in ${sent}`);
    });

    test('an upstream client error arrives in Google’s error shape', async () => {
      const fake = gateway.upstream(family).fake;
      fake.setBehaviour(() => ({ type: 'status', status: 400 }));
      try {
        const response = await call(model(), 'generateContent', { contents: [{ role: 'user', parts: [{ text: 'x' }] }] });
        assert.equal(response.status, 400);
        const body = (await response.json()) as { error: { code: number; status: string; message: string } };
        assert.equal(body.error.code, 400);
        assert.equal(body.error.status, 'INVALID_ARGUMENT');
        assert.match(body.error.message, /fake upstream says 400/);
      } finally {
        fake.setBehaviour(undefined);
      }
    });

    test('a stream cut short upstream ends with an error chunk, never half a chunk', async () => {
      const fake = gateway.upstream(family).fake;
      fake.setBehaviour(() => ({ type: 'cut', afterChunks: 1 }));
      try {
        const events = await readSse(
          await call(
            model(),
            'streamGenerateContent',
            { contents: [{ role: 'user', parts: [{ text: 'one two three four' }] }] },
            '?alt=sse',
          ),
        );
        const last = JSON.parse(events.at(-1)!.data) as { error?: { code: number; status: string } };
        assert.equal(last.error?.status, 'UNAVAILABLE');
        for (const event of events) JSON.parse(event.data);
      } finally {
        fake.setBehaviour(undefined);
      }
    });
  });
}

test('streamGenerateContent without alt=sse streams one JSON array, as Google’s REST API does', async () => {
  for (const upstream of gateway.upstreams) {
    const response = await call(upstream.model, 'streamGenerateContent', { contents: [{ role: 'user', parts: [{ text: 'one two' }] }] });
    assert.equal(response.status, 200, upstream.family);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const chunks = (await response.json()) as GenerateContentResponse[];
    assert.ok(Array.isArray(chunks) && chunks.length >= 2);
    assert.equal(chunks.map((c) => c.candidates[0]?.content.parts.map((p) => p.text ?? '').join('')).join(''), 'Echo: one two');
    assert.equal(chunks.at(-1)?.candidates[0]?.finishReason, 'STOP');
  }
});

test('countTokens answers in Gemini’s shape for every upstream', async () => {
  for (const upstream of gateway.upstreams) {
    const response = await call(upstream.model, 'countTokens', { contents: [{ role: 'user', parts: [{ text: 'count me' }] }] });
    assert.equal(response.status, 200, upstream.family);
    const body = (await response.json()) as { totalTokens: number };
    assert.ok(body.totalTokens > 0);
  }
});

test('GET /v1beta/models lists the models in Gemini’s shape; the key may come in ?key=', async () => {
  const response = await fetch(`${gateway.origin}/v1beta/models?key=${CLIENT_KEY}`);
  assert.equal(response.status, 200);
  const body = (await response.json()) as { models: { name: string; supportedGenerationMethods: string[] }[] };
  assert.deepEqual(body.models.map((m) => m.name).sort(), gateway.upstreams.map((u) => `models/${u.model}`).sort());
  assert.ok(body.models[0]?.supportedGenerationMethods.includes('generateContent'));
  const one = await fetch(`${gateway.origin}/v1beta/models/${gateway.upstream('gemini').model}`, {
    headers: { 'x-goog-api-key': CLIENT_KEY },
  });
  assert.equal(((await one.json()) as { name: string }).name, `models/${gateway.upstream('gemini').model}`);
});

test('bad Gemini input is a 400 in Google’s shape naming the field', async () => {
  const cases: [string, string, unknown, string][] = [
    ['generateContent', '', { contents: 'nope' }, 'contents'],
    ['generateContent', '', { contents: [{ role: 'robot', parts: [{ text: 'x' }] }] }, 'contents[0].role'],
  ];
  for (const [action, query, body, field] of cases) {
    const response = await call(gateway.upstream('anthropic-messages').model, action, body, query);
    assert.equal(response.status, 400, field);
    const error = ((await response.json()) as { error: { status: string; details: { fieldViolations?: { field: string }[] }[] } }).error;
    assert.equal(error.status, 'INVALID_ARGUMENT');
    assert.equal(error.details.flatMap((d) => d.fieldViolations ?? [])[0]?.field, field);
  }
  const unauthorized = await call(gateway.upstream('gemini').model, 'generateContent', { contents: [] }).then(() =>
    fetch(`${gateway.origin}/v1beta/models/x:generateContent`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    }),
  );
  assert.equal(unauthorized.status, 401);
  assert.equal(((await unauthorized.json()) as { error: { status: string } }).error.status, 'UNAUTHENTICATED');
});
