import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiFamily } from './apiFamily.js';
import { TranslationError } from './errors.js';
import { translateRequest } from './families.js';
import type { Json } from './fields.js';

/** Anthropic and Gemini refuse a turn with no content, and a text block or part with no text. */
const STRICT: readonly ApiFamily[] = ['anthropic-messages', 'gemini'];
const decode = { model: 'm', stream: false };

/** Every turn of a translated body, as `[role, content]` (Anthropic `messages`, Gemini `contents`). */
function turns(family: ApiFamily, body: Json): [string, Json[]][] {
  if (family === 'gemini') return (body.contents as { role: string; parts: Json[] }[]).map((c) => [c.role, c.parts]);
  return (body.messages as { role: string; content: Json[] }[]).map((m) => [m.role, m.content]);
}

/** Asserts that no turn, text block or text part of the body is empty (what the two families answer 400 to). */
function assertNothingEmpty(family: ApiFamily, body: Json): void {
  for (const [role, content] of turns(family, body)) {
    assert.ok(content.length > 0, `a ${role} turn with no content: ${JSON.stringify(body)}`);
    for (const block of content) {
      if (typeof block.text === 'string') assert.ok(block.text.trim().length > 0, `an empty text: ${JSON.stringify(body)}`);
      for (const inner of Array.isArray(block.content) ? (block.content as Json[]) : [])
        if (typeof inner.text === 'string') assert.ok(inner.text.trim().length > 0, `an empty tool result text: ${JSON.stringify(body)}`);
    }
  }
}

function refusal(run: () => unknown): TranslationError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof TranslationError, `a TranslationError, not ${String(error)}`);
    return error;
  }
  return assert.fail('the request was translated');
}

const chat = (messages: unknown[]): Json => ({ model: 'gpt', messages });

describe('empty turns, to the families that refuse them', () => {
  for (const to of STRICT) {
    for (const [label, empty] of [
      ['""', { role: 'assistant', content: '' }],
      ['null', { role: 'assistant', content: null }],
      ['[]', { role: 'assistant', content: [] }],
      ['blank text', { role: 'assistant', content: '  \n' }],
      ['reasoning only (another provider’s, not replayable)', { role: 'assistant', content: null, reasoning_content: 'hmm' }],
    ] as const) {
      test(`openai-chat → ${to}: an assistant turn with nothing to say (${label}) is dropped and reported`, () => {
        const { body, dropped } = translateRequest(
          'openai-chat',
          to,
          chat([
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Hi' },
            empty,
            { role: 'user', content: 'Still there?' },
          ]),
          decode,
        );
        assertNothingEmpty(to, body);
        const all = turns(to, body);
        assert.equal(all.length, 1, 'the two user turns around it are one turn now');
        assert.deepEqual(
          all[0]![1].map((b) => b.text),
          ['Hi', 'Still there?'],
        );
        assert.ok(dropped.includes('messages[2].content'), `dropped: ${dropped.join(', ')}`);
      });
    }

    for (const [label, content] of [
      ['""', ''],
      ['[]', []],
      ['null', null],
      ['blank text', ' '],
    ] as const) {
      test(`openai-chat → ${to}: a user turn with nothing in it (${label}) is refused with invalid_request naming the client's field`, () => {
        const error = refusal(() =>
          translateRequest(
            'openai-chat',
            to,
            chat([
              { role: 'system', content: 'Be brief.' },
              { role: 'user', content },
            ]),
            decode,
          ),
        );
        assert.equal(error.code, 'invalid_request');
        assert.equal(error.param, 'messages[1].content');
        assert.match(error.message, /empty/);
      });
    }

    test(`openai-chat → ${to}: an empty user message next to one with text merges into it instead of being refused`, () => {
      const { body } = translateRequest(
        'openai-chat',
        to,
        chat([
          { role: 'user', content: '' },
          { role: 'user', content: 'Hello' },
        ]),
        decode,
      );
      assertNothingEmpty(to, body);
      assert.equal(turns(to, body).length, 1);
    });

    test(`openai-chat → ${to}: a tool result with no content is sent without an empty text`, () => {
      for (const content of ['', null, []]) {
        const { body } = translateRequest(
          'openai-chat',
          to,
          chat([
            { role: 'user', content: 'Run it' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'run', arguments: '{}' } }] },
            { role: 'tool', tool_call_id: 'c1', content },
          ]),
          decode,
        );
        assertNothingEmpty(to, body);
        assert.equal(turns(to, body).length, 3, JSON.stringify(content));
      }
    });

    test(`openai-chat → ${to}: blank text beside tool calls is left out, the calls stay`, () => {
      const { body } = translateRequest(
        'openai-chat',
        to,
        chat([
          { role: 'user', content: 'Run it' },
          { role: 'assistant', content: '\n\n', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'run', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'done' },
        ]),
        decode,
      );
      assertNothingEmpty(to, body);
      assert.equal(turns(to, body)[1]![1].length, 1);
    });

    test(`openai-chat → ${to}: empty system messages are left out`, () => {
      const { body } = translateRequest(
        'openai-chat',
        to,
        chat([
          { role: 'system', content: '' },
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [] },
          { role: 'user', content: 'Hi' },
        ]),
        decode,
      );
      if (to === 'gemini') assert.deepEqual(body.systemInstruction, { parts: [{ text: 'Be brief.' }] });
      else assert.equal(body.system, 'Be brief.');
    });
  }

  test('anthropic-messages → gemini: an assistant turn of one empty text block is dropped', () => {
    const { body, dropped } = translateRequest(
      'anthropic-messages',
      'gemini',
      {
        model: 'claude',
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [{ type: 'text', text: '' }] },
          { role: 'user', content: [{ type: 'text', text: 'Still there?' }] },
        ],
      },
      decode,
    );
    assertNothingEmpty('gemini', body);
    assert.equal(turns('gemini', body).length, 1);
    assert.deepEqual(dropped, ['messages[1].content']);
  });

  test('gemini → anthropic-messages: a model turn of one empty text part is dropped; an empty user turn is refused by its path', () => {
    const { body } = translateRequest(
      'gemini',
      'anthropic-messages',
      {
        contents: [
          { role: 'user', parts: [{ text: 'Hi' }] },
          { role: 'model', parts: [{ text: '' }] },
        ],
      },
      decode,
    );
    assertNothingEmpty('anthropic-messages', body);
    assert.equal(turns('anthropic-messages', body).length, 1);
    const error = refusal(() =>
      translateRequest(
        'gemini',
        'anthropic-messages',
        {
          contents: [
            { role: 'user', parts: [{ text: 'Hi' }] },
            { role: 'model', parts: [{ text: 'Yes?' }] },
            { role: 'user', parts: [] },
          ],
        },
        decode,
      ),
    );
    assert.equal(error.param, 'contents[2].parts');
  });

  test('openai-responses → anthropic-messages: an empty user message item is refused by its path', () => {
    const error = refusal(() =>
      translateRequest('openai-responses', 'anthropic-messages', { model: 'gpt', input: [{ role: 'user', content: '' }] }, decode),
    );
    assert.equal(error.code, 'invalid_request');
    assert.equal(error.param, 'input[0].content');
  });

  test('families that take empty turns still get them: openai-chat → openai-responses keeps an empty user message', () => {
    const { body } = translateRequest('openai-chat', 'openai-responses', chat([{ role: 'user', content: '' }]), decode);
    assert.ok(Array.isArray(body.input));
  });
});
