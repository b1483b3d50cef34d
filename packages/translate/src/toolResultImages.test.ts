import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TranslationError } from './errors.js';
import { translateRequest } from './families.js';

const decode = { model: 'm', stream: false };
const PNG = 'iVBORw0KGgo=';

/** An Anthropic conversation whose tool result holds text, an inline image and an image by URL. */
const anthropicBody = {
  model: 'claude',
  max_tokens: 100,
  messages: [
    { role: 'user', content: 'What does the camera see?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'snapshot', input: {} }] },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          content: [
            { type: 'text', text: 'two frames' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/frame.jpg' } },
          ],
        },
      ],
    },
  ],
};

/** A Responses conversation whose `function_call_output` lists text and an image. */
const responsesBody = (output: unknown) => ({
  model: 'gpt',
  input: [
    { type: 'message', role: 'user', content: 'What does the camera see?' },
    { type: 'function_call', call_id: 'call_1', name: 'snapshot', arguments: '{}' },
    { type: 'function_call_output', call_id: 'call_1', output },
  ],
});
const textAndImage = [
  { type: 'input_text', text: 'one frame' },
  { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
];

const outputOf = (body: Record<string, unknown>) =>
  (body.input as { type: string; output?: unknown }[]).find((item) => item.type === 'function_call_output')?.output;

describe('images inside tool results', () => {
  test('Anthropic → Responses: they reach the function_call_output as input_image items, after the text, not dropped', () => {
    const { body, dropped } = translateRequest('anthropic-messages', 'openai-responses', anthropicBody, decode);
    assert.deepEqual(outputOf(body), [
      { type: 'input_text', text: 'two frames' },
      { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
      { type: 'input_image', image_url: 'https://example.com/frame.jpg', detail: 'auto' },
    ]);
    assert.deepEqual(dropped, []);
  });

  test('an image alone is still a list (a string output has no room for it)', () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } };
    const result = { type: 'tool_result', tool_use_id: 'toolu_1', content: [image] };
    const body = { ...anthropicBody, messages: [...anthropicBody.messages.slice(0, 2), { role: 'user', content: [result] }] };
    assert.deepEqual(outputOf(translateRequest('anthropic-messages', 'openai-responses', body, decode).body), [
      { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
    ]);
  });

  test('Responses → Anthropic: an input_image in a function_call_output becomes an image block of the tool_result', () => {
    const { body, dropped } = translateRequest('openai-responses', 'anthropic-messages', responsesBody(textAndImage), decode);
    const turns = body.messages as { role: string; content: { type: string; content?: unknown }[] }[];
    const result = turns.flatMap((turn) => turn.content).find((block) => block.type === 'tool_result');
    assert.deepEqual(result, {
      type: 'tool_result',
      tool_use_id: 'call_1',
      content: [
        { type: 'text', text: 'one frame' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      ],
    });
    assert.deepEqual(dropped, []);
  });

  test('Responses → OpenAI chat, whose tool messages hold only text: the text goes, the image is reported dropped', () => {
    const { body, dropped } = translateRequest('openai-responses', 'openai-chat', responsesBody(textAndImage), decode);
    const tool = (body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'tool');
    assert.equal(tool?.content, 'one frame');
    assert.deepEqual(dropped, ['input[2].output[1]'], 'the image is named by its place in the client’s body');
  });

  test('a file in a function_call_output, which no other family can take, is refused naming its field', () => {
    const output = [...textAndImage, { type: 'input_file', file_id: 'file-1' }];
    assert.throws(
      () => translateRequest('openai-responses', 'anthropic-messages', responsesBody(output), decode),
      (error: unknown) =>
        error instanceof TranslationError && error.code === 'unsupported_translation' && error.param === 'input[2].output[2].type',
    );
  });
});
