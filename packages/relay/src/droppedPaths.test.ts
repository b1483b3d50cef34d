import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ApiFamily, codecFor, translateRequest } from '@switchyard/translate';
import type { Json } from '@switchyard/translate/wire';
import { encodeCloudAssistantRequest } from './providers/cloudCodingAssistant.js';

/**
 * Each client's conversation puts the dropped part past index 0, after a
 * system prompt where the family has one in its message list, so a name
 * built from the neutral model's message index (system lifted out, tool
 * results merged) cannot pass for the client's own path.
 */
const decode = { model: 'm', stream: false };
const PNG_URL = 'data:image/png;base64,iVBORw0KGgo=';

/** An OpenAI chat conversation whose second tool message holds an image as its second part. */
const chatBody = {
  model: 'gpt',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What do the cameras see?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'snapshot', arguments: '{"camera":1}' } },
        { id: 'call_2', type: 'function', function: { name: 'snapshot', arguments: '{"camera":2}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'camera 1 is off' },
    {
      role: 'tool',
      tool_call_id: 'call_2',
      content: [
        { type: 'text', text: 'one frame' },
        { type: 'image_url', image_url: { url: PNG_URL } },
      ],
    },
  ],
};

/** A Responses conversation with a developer message, whose `function_call_output` lists text then an image. */
const responsesBody = {
  model: 'gpt',
  instructions: 'Be brief.',
  input: [
    { type: 'message', role: 'developer', content: 'Answer in French.' },
    { type: 'message', role: 'user', content: 'What does the camera see?' },
    { type: 'function_call', call_id: 'call_1', name: 'snapshot', arguments: '{}' },
    {
      type: 'function_call_output',
      call_id: 'call_1',
      output: [
        { type: 'input_text', text: 'one frame' },
        { type: 'input_image', image_url: PNG_URL },
      ],
    },
  ],
};

/** An Anthropic conversation whose second tool result failed and holds an image as its second block. */
const anthropicBody = {
  model: 'claude',
  max_tokens: 100,
  system: 'Be brief.',
  messages: [
    { role: 'user', content: 'What do the cameras see?' },
    {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'toolu_1', name: 'snapshot', input: { camera: 1 } },
        { type: 'tool_use', id: 'toolu_2', name: 'snapshot', input: { camera: 2 } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'camera 1 is off' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_2',
          is_error: true,
          content: [
            { type: 'text', text: 'a broken frame' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
      ],
    },
  ],
};

/** A Gemini conversation whose second function response is an error. */
const geminiBody = {
  systemInstruction: { parts: [{ text: 'Be brief.' }] },
  contents: [
    { role: 'user', parts: [{ text: 'What do the cameras see?' }] },
    {
      role: 'model',
      parts: [{ functionCall: { name: 'snapshot', args: { camera: 1 } } }, { functionCall: { name: 'inspect', args: { camera: 2 } } }],
    },
    {
      role: 'user',
      parts: [
        { functionResponse: { name: 'snapshot', response: { output: 'camera 1 is off' } } },
        { functionResponse: { name: 'inspect', response: { error: 'camera 2 is unreachable' } } },
      ],
    },
  ],
};

/** What the cloud coding assistant's encoder drops from a client's body. */
function droppedForCloudAssistant(from: ApiFamily, body: Json): string[] {
  const request = codecFor(from).decodeRequest(body, decode);
  encodeCloudAssistantRequest(request, { provider: { name: 'c', kind: 'cloud-coding-assistant' }, credential: undefined });
  return request.dropped;
}

describe('dropped fields are named by the client’s own paths', () => {
  test('Responses → OpenAI chat: the tool result’s image is input[3].output[1]', () => {
    const { dropped } = translateRequest('openai-responses', 'openai-chat', responsesBody, decode);
    assert.deepEqual(dropped, ['input[3].output[1]']);
  });

  test('Anthropic → OpenAI chat: the image block and the is_error flag, inside content[1] of messages[2]', () => {
    const { dropped } = translateRequest('anthropic-messages', 'openai-chat', anthropicBody, decode);
    assert.deepEqual(dropped, ['messages[2].content[1].content[1]', 'messages[2].content[1].is_error']);
  });

  test('Anthropic → Responses: images cross, the is_error flag is named by its own field', () => {
    const { dropped } = translateRequest('anthropic-messages', 'openai-responses', anthropicBody, decode);
    assert.deepEqual(dropped, ['messages[2].content[1].is_error']);
  });

  for (const to of ['openai-chat', 'openai-responses'] as const)
    test(`Gemini → ${to}: the failed function response is contents[2].parts[1]`, () => {
      const { dropped } = translateRequest('gemini', to, geminiBody, decode);
      assert.deepEqual(dropped, ['contents[2].parts[1].functionResponse.response.error']);
    });

  test('OpenAI chat → cloud coding assistant: the image is messages[4].content[1], counted with the system message', () => {
    assert.deepEqual(droppedForCloudAssistant('openai-chat', chatBody), ['messages[4].content[1]']);
  });

  test('Anthropic → cloud coding assistant: the image inside the second tool result', () => {
    assert.deepEqual(droppedForCloudAssistant('anthropic-messages', anthropicBody), ['messages[2].content[1].content[1]', 'max_tokens']);
  });

  test('Gemini → OpenAI chat and Responses: sampling settings are named inside generationConfig', () => {
    const body = { ...geminiBody, generationConfig: { topK: 40, seed: 7, stopSequences: ['END'] } };
    assert.deepEqual(translateRequest('gemini', 'openai-chat', body, decode).dropped, [
      'contents[2].parts[1].functionResponse.response.error',
      'generationConfig.topK',
    ]);
    assert.deepEqual(translateRequest('gemini', 'openai-responses', body, decode).dropped, [
      'contents[2].parts[1].functionResponse.response.error',
      'generationConfig.stopSequences',
      'generationConfig.topK',
      'generationConfig.seed',
    ]);
  });

  test('Anthropic → Responses and Gemini: stop_sequences, metadata.user_id and disable_parallel_tool_use by their own names', () => {
    const body = {
      ...anthropicBody,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    };
    assert.deepEqual(translateRequest('anthropic-messages', 'openai-responses', body, decode).dropped, [
      'messages[2].content[1].is_error',
      'stop_sequences',
    ]);
    assert.deepEqual(translateRequest('anthropic-messages', 'gemini', body, decode).dropped, [
      'tool_choice.disable_parallel_tool_use',
      'metadata.user_id',
    ]);
  });

  test('OpenAI chat → cloud coding assistant: max_completion_tokens and reasoning_effort as the client sent them', () => {
    assert.deepEqual(droppedForCloudAssistant('openai-chat', { ...chatBody, max_completion_tokens: 50, reasoning_effort: 'low' }), [
      'messages[4].content[1]',
      'max_completion_tokens',
      'reasoning_effort',
    ]);
  });
});
