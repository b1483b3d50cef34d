import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { aggregateStream } from './aggregate.js';
import { codecFor, translateRequest, translateResponse } from './families.js';
import { SseStreamDecoder, StreamTranslator } from './streamTranslator.js';

const decode = { model: 'm', stream: false };
const context = { model: 'client-model', requestId: 'req_1', now: 0 };

describe('what Claude Code sends: adaptive thinking and output_config.effort', () => {
  const body = (extra: Record<string, unknown>) => ({
    model: 'claude-opus-4-6',
    max_tokens: 32_000,
    messages: [{ role: 'user', content: 'Refactor this.' }],
    ...extra,
  });

  test('thinking {type: "adaptive"} is read, not refused, and the effort travels as each family says it', () => {
    const request = codecFor('anthropic-messages').decodeRequest(
      body({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } }),
      decode,
    );
    assert.deepEqual(request.reasoning, { effort: 'medium', includeThoughts: true });
    assert.deepEqual(request.dropped, []);
    const chat = translateRequest(
      'anthropic-messages',
      'openai-chat',
      body({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }),
      decode,
    );
    assert.equal(chat.body.reasoning_effort, 'low');
    const gemini = translateRequest('anthropic-messages', 'gemini', body({ thinking: { type: 'adaptive' } }), decode);
    assert.deepEqual((gemini.body.generationConfig as { thinkingConfig: unknown }).thinkingConfig, { includeThoughts: true });
  });

  test('efforts above high (max, xhigh) are the highest other families have; an unknown one is a 400 naming the field', () => {
    for (const effort of ['max', 'xhigh']) {
      const { body: chat } = translateRequest(
        'anthropic-messages',
        'openai-chat',
        body({ thinking: { type: 'adaptive' }, output_config: { effort } }),
        decode,
      );
      assert.equal(chat.reasoning_effort, 'high', effort);
    }
    assert.throws(() => translateRequest('anthropic-messages', 'openai-chat', body({ output_config: { effort: 'extreme' } }), decode), {
      code: 'invalid_request',
      param: 'output_config.effort',
    });
  });

  test('other output_config members are named as dropped', () => {
    const { dropped } = translateRequest(
      'anthropic-messages',
      'openai-chat',
      body({ output_config: { effort: 'high', task_budget: 5 } }),
      decode,
    );
    assert.deepEqual(dropped, ['output_config.task_budget']);
  });
});

describe('OpenAI-compatible servers that answer tool calls with finish_reason "stop"', () => {
  const call = { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } };

  test('complete: the answer is a tool_use answer to Anthropic, as the calls say', () => {
    const completion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'local',
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'stop' }],
    };
    const { body } = translateResponse('openai-chat', 'anthropic-messages', completion, context);
    assert.equal(body.stop_reason, 'tool_use');
  });

  test('streamed: message_delta says tool_use', () => {
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'local', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const upstream = [chunk({ role: 'assistant', tool_calls: [{ index: 0, ...call }] }), chunk({}, 'stop'), 'data: [DONE]\n\n'].join('');
    const translator = StreamTranslator.between('openai-chat', 'anthropic-messages', context);
    const out = translator.push(Buffer.from(upstream)) + translator.finish();
    assert.match(out, /"stop_reason":"tool_use"/);
    const decoder = new SseStreamDecoder(codecFor('anthropic-messages').streamDecoder());
    assert.equal(aggregateStream([...decoder.push(Buffer.from(out)), ...decoder.end()]).stopReason, 'tool_use');
  });

  test('a "length" finish with calls stays a max_tokens finish (the calls may be cut short)', () => {
    const completion = { choices: [{ index: 0, message: { role: 'assistant', tool_calls: [call] }, finish_reason: 'length' }] };
    assert.equal(translateResponse('openai-chat', 'anthropic-messages', completion, context).body.stop_reason, 'max_tokens');
  });
});

test('openai-chat: max_completion_tokens: null does not hide max_tokens', () => {
  const request = codecFor('openai-chat').decodeRequest(
    { model: 'gpt', messages: [{ role: 'user', content: 'hi' }], max_tokens: 300, max_completion_tokens: null },
    decode,
  );
  assert.equal(request.maxTokens, 300);
});
