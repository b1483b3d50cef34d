import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TranslationError } from './errors.js';
import { translateResponse } from './families.js';

const context = { model: 'client-model', requestId: 'req_1', now: 0 };

/** A chat completion whose one tool call has arguments that are not JSON (some OpenAI-compatible servers send these). */
const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": Paris' } }],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
};

for (const to of ['anthropic-messages', 'gemini'] as const)
  test(`translateResponse → ${to}: tool arguments that are not JSON are a TranslationError with the stable code invalid_response`, () => {
    assert.throws(
      () => translateResponse('openai-chat', to, completion, context),
      (error: unknown) => {
        assert.ok(error instanceof TranslationError, String(error));
        assert.equal(error.code, 'invalid_response');
        assert.match(error.message, /get_weather/);
        assert.ok(error.cause instanceof SyntaxError, 'the parse error is the cause');
        return true;
      },
    );
  });

test('translateResponse: families that carry arguments as text pass them on as they came', () => {
  const { body } = translateResponse('openai-chat', 'openai-responses', completion, context);
  assert.equal((body.output as { arguments: string }[])[0]?.arguments, '{"city": Paris');
});
