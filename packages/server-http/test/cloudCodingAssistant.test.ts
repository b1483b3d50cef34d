import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { type FakeUpstream, startFakeCloudAssistant } from '@switchyard/test-support';
import OpenAI from 'openai';
import { CLIENT_KEY, type MatrixGateway, readSse, startMatrixGateway, WEATHER_TOOL } from './harness.js';

let cloud: FakeUpstream;
let gateway: MatrixGateway;
let openai: OpenAI;
let anthropic: Anthropic;
const model = 'cloud-claude';
before(async () => {
  cloud = await startFakeCloudAssistant();
  gateway = await startMatrixGateway([
    {
      name: 'cloud',
      kind: 'cloud-coding-assistant',
      baseUrl: cloud.url,
      models: [model],
      options: { profile_arn: 'arn:aws:codewhisperer:us-east-1:1:profile/P' },
    },
  ]);
  openai = new OpenAI({ apiKey: CLIENT_KEY, baseURL: `${gateway.origin}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: CLIENT_KEY, baseURL: gateway.origin, maxRetries: 0 });
});
after(async () => {
  await gateway.close();
  await cloud.close();
});

const lastBody = () => cloud.requests.at(-1)!.body as { conversationState: Record<string, unknown>; profileArn?: string };

test('OpenAI chat, non-streaming: the conversation goes up as conversationState, the event stream comes back as a completion', async () => {
  const completion = await openai.chat.completions.create({
    model,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'second question' },
    ],
    temperature: 0.3,
  });
  assert.equal(completion.choices[0]?.message.content, 'Echo: second question');
  assert.equal(completion.choices[0]?.finish_reason, 'stop');
  const body = lastBody();
  assert.equal(body.profileArn, 'arn:aws:codewhisperer:us-east-1:1:profile/P');
  const history = body.conversationState.history as {
    userInputMessage?: { content: string };
    assistantResponseMessage?: { content: string };
  }[];
  assert.equal(history[0]?.userInputMessage?.content, 'Be brief.\n\nfirst');
  assert.equal(history[1]?.assistantResponseMessage?.content, 'ok');
  assert.equal(
    (body.conversationState.currentMessage as { userInputMessage: { content: string; modelId: string } }).userInputMessage.modelId,
    model,
  );
  assert.equal(cloud.requests.at(-1)?.headers.authorization, `Bearer upstream-key-cloud`);
});

test('OpenAI chat, streaming with tools: toolUseEvent fragments become tool_calls deltas', async () => {
  const stream = await openai.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'weather?' }],
    tools: [{ type: 'function', function: WEATHER_TOOL }],
    stream: true,
  });
  let args = '';
  let name = '';
  let finish: string | null | undefined;
  for await (const chunk of stream) {
    const call = chunk.choices[0]?.delta.tool_calls?.[0];
    name += call?.function?.name ?? '';
    args += call?.function?.arguments ?? '';
    finish ??= chunk.choices[0]?.finish_reason;
  }
  assert.equal(name, 'get_weather');
  assert.deepEqual(JSON.parse(args), { location: 'Paris' });
  assert.equal(finish, 'tool_calls');
  const tools = (lastBody().conversationState.currentMessage as { userInputMessage: { userInputMessageContext: { tools: unknown[] } } })
    .userInputMessage.userInputMessageContext.tools;
  assert.deepEqual(tools[0], {
    toolSpecification: { name: 'get_weather', description: WEATHER_TOOL.description, inputSchema: { json: WEATHER_TOOL.parameters } },
  });
});

test('Anthropic messages, streamed and plain, with tool results going back up', async () => {
  const streamed = await anthropic.messages
    .stream({ model, max_tokens: 50, messages: [{ role: 'user', content: 'one two' }] })
    .finalMessage();
  assert.equal(streamed.content[0]?.type === 'text' ? streamed.content[0].text : '', 'Echo: one two');
  const message = await anthropic.messages.create({
    model,
    max_tokens: 50,
    messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hail', is_error: true }] },
    ],
  });
  assert.equal(message.stop_reason, 'end_turn');
  const state = lastBody().conversationState as {
    history: { assistantResponseMessage?: { toolUses: unknown[] } }[];
    currentMessage: { userInputMessage: { userInputMessageContext: { toolResults: unknown[] } } };
  };
  assert.deepEqual(state.history[1]?.assistantResponseMessage?.toolUses, [
    { toolUseId: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
  ]);
  assert.deepEqual(state.currentMessage.userInputMessage.userInputMessageContext.toolResults, [
    { toolUseId: 'toolu_1', content: [{ text: 'hail' }], status: 'error' },
  ]);
});

test('Responses and Gemini clients get their own shapes; sampling settings are reported as dropped', async () => {
  const response = await openai.responses.create({ model, input: 'hello there' });
  assert.equal(response.output_text, 'Echo: hello there');
  const gemini = await fetch(`${gateway.origin}/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
    method: 'POST',
    headers: { 'x-goog-api-key': CLIENT_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      generationConfig: { temperature: 0.1, maxOutputTokens: 9 },
    }),
  });
  assert.equal(gemini.headers.get('x-switchyard-dropped-fields'), 'generationConfig.maxOutputTokens, generationConfig.temperature');
  const events = await readSse(gemini);
  const text = events
    .map((e) =>
      (JSON.parse(e.data) as { candidates: { content: { parts: { text?: string }[] } }[] }).candidates[0]?.content.parts
        .map((p) => p.text ?? '')
        .join(''),
    )
    .join('');
  assert.equal(text, 'Echo: hi');
});

test('images by URL are refused by name; a stream cut mid-message ends with an error event', async () => {
  await assert.rejects(
    openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }],
    }),
    (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'messages[0].content[0]',
  );
  cloud.setBehaviour(() => ({ type: 'cut', afterChunks: 1 }));
  try {
    const stream = anthropic.messages.stream({ model, max_tokens: 10, messages: [{ role: 'user', content: 'one two three' }] });
    await assert.rejects(stream.finalMessage(), (error: unknown) => error instanceof Anthropic.APIError);
  } finally {
    cloud.setBehaviour(undefined);
  }
});

test('a throttled provider is a 429 in the client’s shape', async () => {
  cloud.setBehaviour(() => ({ type: 'status', status: 429 }));
  try {
    await assert.rejects(
      openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof OpenAI.RateLimitError,
    );
  } finally {
    cloud.setBehaviour(undefined);
  }
});
