import assert from 'node:assert/strict';
import { test } from 'node:test';
import { aggregateStream } from './aggregate.js';
import { API_FAMILIES, codecFor, translateResponse } from './families.js';
import { SseStreamDecoder, StreamTranslator } from './streamTranslator.js';

const thinkingStream = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_t","type":"message","role":"assistant","content":[],"model":"claude","usage":{"input_tokens":12,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAh"}}\n\n',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"42."}}\n\n',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":30}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
].join('');

test('reasoning travels as each family carries it: reasoning_content, reasoning items, thought parts, thinking blocks', () => {
  const context = { model: 'm', requestId: 'r', now: 0 };
  const expected = {
    chat: '"reasoning_content":"Let me think."',
    responses: 'response.reasoning_summary_text.delta',
    gemini: '"thought":true',
  };
  for (const to of API_FAMILIES) {
    const translator = StreamTranslator.between('anthropic-messages', to, context);
    const out = translator.push(Buffer.from(thinkingStream)) + translator.finish();
    if (to === 'openai-chat') assert.ok(out.includes(expected.chat), out);
    if (to === 'openai-responses') assert.ok(out.includes(expected.responses), out);
    if (to === 'gemini') assert.ok(out.includes(expected.gemini), out);
    const decoder = new SseStreamDecoder(codecFor(to).streamDecoder());
    const answer = aggregateStream([...decoder.push(Buffer.from(out)), ...decoder.end()]);
    assert.deepEqual(
      answer.parts.map((p) => [p.type, p.type === 'tool_call' ? p.name : p.text]),
      [
        ['thinking', 'Let me think.'],
        ['text', '42.'],
      ],
      to,
    );
    if (to === 'anthropic-messages' || to === 'gemini') {
      const thinking = answer.parts[0];
      assert.equal(thinking?.type === 'thinking' ? thinking.signature : undefined, 'EqQBCgIYAh', `${to} keeps the signature`);
    }
  }
});

test('a complete answer’s reasoning is kept as each family carries it', () => {
  const message = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude',
    content: [
      { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
      { type: 'text', text: 'Done.' },
    ],
    stop_reason: 'end_turn',
    usage: { input_tokens: 1, output_tokens: 2 },
  };
  const context = { model: 'm', requestId: 'r', now: 0 };
  const chat = translateResponse('anthropic-messages', 'openai-chat', message, context).body as {
    choices: { message: Record<string, unknown> }[];
  };
  assert.equal(chat.choices[0]?.message.reasoning_content, 'Hmm.');
  const responses = translateResponse('anthropic-messages', 'openai-responses', message, context).body as { output: { type: string }[] };
  assert.deepEqual(
    responses.output.map((o) => o.type),
    ['reasoning', 'message'],
  );
  const gemini = translateResponse('anthropic-messages', 'gemini', message, context).body as {
    candidates: { content: { parts: unknown[] } }[];
  };
  assert.deepEqual(gemini.candidates[0]?.content.parts[0], { text: 'Hmm.', thought: true, thoughtSignature: 'sig' });
});

test('reasoning settings: effort ↔ budget through the shared table', () => {
  const chat = codecFor('openai-chat').decodeRequest(
    { model: 'm', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high', max_tokens: 1000 },
    { model: 'm', stream: false },
  );
  const anthropic = codecFor('anthropic-messages').encodeRequest(structuredClone(chat));
  assert.deepEqual(anthropic.thinking, { type: 'enabled', budget_tokens: 24576 });
  assert.ok((anthropic.max_tokens as number) > 24576, 'max_tokens is raised above the budget, as Anthropic requires');
  const gemini = codecFor('gemini').encodeRequest(structuredClone(chat));
  assert.deepEqual((gemini.generationConfig as { thinkingConfig: unknown }).thinkingConfig, { thinkingBudget: 24576 });
  const back = codecFor('anthropic-messages').decodeRequest(anthropic, { model: 'm', stream: false });
  assert.equal(codecFor('openai-chat').encodeRequest(back).reasoning_effort, 'high');
});
