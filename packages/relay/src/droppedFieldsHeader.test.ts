import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Transport } from './providers/adapter.js';
import { Relay, type RelayCredentialPool } from './relay.js';
import { MemorySink } from './sink.js';
import type { ApiFamily } from './types.js';

const pool: RelayCredentialPool = {
  acquire: () => ({ id: 'k1', token: 'upstream-secret' }),
  reportSuccess() {},
  reportUsage() {},
  reportFailure() {},
  refresh: async () => ({ id: 'k1', token: 'upstream-secret' }),
};

/** A complete answer of one word, in each provider kind's shape. */
const ANSWERS: Record<'openai' | 'anthropic', unknown> = {
  openai: {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
  },
  anthropic: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content: [{ type: 'text', text: 'ok' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 1 },
  },
};

/** The `x-switchyard-dropped-fields` header of a complete answer to `body`, relayed to a provider of `kind`. */
async function droppedHeader(ingress: ApiFamily, kind: keyof typeof ANSWERS, body: Record<string, unknown>): Promise<unknown> {
  const transport: Transport = {
    send: async () => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: (async function* () {
        yield Buffer.from(JSON.stringify(ANSWERS[kind]));
      })(),
      cancel() {},
    }),
  };
  const relay = new Relay({ providers: [{ name: 'p', kind, models: ['m'] }], transport, credentials: { pool: () => pool } });
  const sink = new MemorySink();
  await relay.handle({ requestId: 'req-1', ingress, model: 'm', stream: false, body, rawBody: Buffer.from(JSON.stringify(body)) }, sink);
  assert.equal(sink.status, 200, sink.text());
  return sink.headers['x-switchyard-dropped-fields'];
}

const PNG_URL = 'data:image/png;base64,iVBORw0KGgo=';

describe('x-switchyard-dropped-fields names the client’s own paths, past a system prompt', () => {
  test('OpenAI chat → Anthropic: an empty assistant turn after the system message is messages[3].content', async () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello?' },
        { role: 'assistant', content: 'Hi.' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'Still there?' },
      ],
    };
    assert.equal(await droppedHeader('openai-chat', 'anthropic', body), 'messages[3].content');
  });

  test('Responses → OpenAI chat: the image of a function_call_output is input[3].output[1]', async () => {
    const body = {
      model: 'm',
      input: [
        { type: 'message', role: 'developer', content: 'Be brief.' },
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
    assert.equal(await droppedHeader('openai-responses', 'openai', body), 'input[3].output[1]');
  });

  test('Anthropic → OpenAI chat: the second tool result’s is_error, inside messages[2].content[1]', async () => {
    const body = {
      model: 'm',
      max_tokens: 50,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Check both cameras.' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'snapshot', input: {} },
            { type: 'tool_use', id: 'toolu_2', name: 'snapshot', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'fine' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'unreachable', is_error: true },
          ],
        },
      ],
    };
    assert.equal(await droppedHeader('anthropic-messages', 'openai', body), 'messages[2].content[1].is_error');
  });

  test('Gemini → OpenAI chat: a failed function response and topK, inside contents and generationConfig', async () => {
    const body = {
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { topK: 40 },
      contents: [
        { role: 'user', parts: [{ text: 'Check both cameras.' }] },
        { role: 'model', parts: [{ functionCall: { name: 'front', args: {} } }, { functionCall: { name: 'back', args: {} } }] },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'front', response: { output: 'fine' } } },
            { functionResponse: { name: 'back', response: { error: 'unreachable' } } },
          ],
        },
      ],
    };
    assert.equal(
      await droppedHeader('gemini', 'openai', body),
      'contents[2].parts[1].functionResponse.response.error, generationConfig.topK',
    );
  });
});
