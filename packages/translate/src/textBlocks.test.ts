import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { translateRequest } from './families.js';

const decode = { model: 'm', stream: false };

/** An Anthropic conversation whose tool result has two text blocks. */
const anthropicBody = (content: unknown) => ({
  model: 'claude',
  max_tokens: 100,
  messages: [
    { role: 'user', content: 'Look it up.' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] },
  ],
});
const twoBlocks = [
  { type: 'text', text: 'first line' },
  { type: 'text', text: 'second line' },
];

describe('separate text blocks stay separate (never glued into one word-run)', () => {
  test('an Anthropic tool result with several text blocks reaches OpenAI chat as a tool message with an array of text parts', () => {
    const { body } = translateRequest('anthropic-messages', 'openai-chat', anthropicBody(twoBlocks), decode);
    const tool = (body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'tool');
    assert.deepEqual(tool?.content, twoBlocks);
  });

  test('one text block stays a plain string (what every OpenAI-compatible server takes)', () => {
    const { body } = translateRequest('anthropic-messages', 'openai-chat', anthropicBody([{ type: 'text', text: 'only' }]), decode);
    const tool = (body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'tool');
    assert.equal(tool?.content, 'only');
  });

  test('…and Responses as a function_call_output whose output lists input_text items', () => {
    const { body } = translateRequest('anthropic-messages', 'openai-responses', anthropicBody(twoBlocks), decode);
    const output = (body.input as { type: string; output?: unknown }[]).find((i) => i.type === 'function_call_output');
    assert.deepEqual(output?.output, [
      { type: 'input_text', text: 'first line' },
      { type: 'input_text', text: 'second line' },
    ]);
  });

  test('…and Gemini, whose functionResponse holds one value, joined with a newline', () => {
    const { body } = translateRequest('anthropic-messages', 'gemini', anthropicBody(twoBlocks), decode);
    const contents = body.contents as { parts: { functionResponse?: { response: unknown } }[] }[];
    const response = contents.flatMap((c) => c.parts).find((p) => p.functionResponse)?.functionResponse?.response;
    assert.deepEqual(response, { output: 'first line\nsecond line' });
  });

  test('an OpenAI chat system message with several text parts becomes as many system blocks', () => {
    const body = {
      model: 'gpt',
      messages: [
        { role: 'system', content: twoBlocks },
        { role: 'user', content: 'hi' },
      ],
    };
    const anthropic = translateRequest('openai-chat', 'anthropic-messages', body, decode).body;
    assert.deepEqual(anthropic.system, twoBlocks);
    const gemini = translateRequest('openai-chat', 'gemini', body, decode).body;
    assert.deepEqual(gemini.systemInstruction, { parts: [{ text: 'first line' }, { text: 'second line' }] });
  });

  test('a Responses developer message with several input_text parts becomes as many system blocks', () => {
    const body = {
      model: 'gpt',
      input: [
        {
          type: 'message',
          role: 'developer',
          content: [
            { type: 'input_text', text: 'first line' },
            { type: 'input_text', text: 'second line' },
          ],
        },
        { type: 'message', role: 'user', content: 'hi' },
      ],
    };
    assert.deepEqual(translateRequest('openai-responses', 'anthropic-messages', body, decode).body.system, twoBlocks);
  });
});
