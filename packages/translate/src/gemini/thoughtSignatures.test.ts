/**
 * Function calls sent to Gemini 3 carry a thought signature: their own when
 * the client kept it (a Gemini client, or a call decoded with one), else the
 * skip value Google documents for calls the model did not sign, on the first
 * call of each model turn as Gemini signs them. Older models get no
 * signature they did not give.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { translateRequest } from '../families.js';
import { UNSIGNED_CALL_SIGNATURE, validatesCallSignatures } from './request.js';

type Json = Record<string, unknown>;

/** Claude Code's second turn: two parallel Bash calls and their results. */
const anthropicTurn = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages: [
    { role: 'user', content: 'Write two files.' },
    {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'echo a > a.txt' } },
        { type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'echo b > b.txt' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: 'ok' },
      ],
    },
  ],
  tools: [{ name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
};

function callParts(body: Json): Json[] {
  return (body.contents as { parts: Json[] }[]).flatMap((c) => c.parts).filter((p) => p.functionCall);
}

describe('thought signatures on function calls sent to Gemini', () => {
  test('Gemini 3: the first unsigned call of a turn gets the documented skip signature, the parallel call after it none', () => {
    const { body } = translateRequest('anthropic-messages', 'gemini', anthropicTurn, { model: 'gemini-3-pro-preview', stream: true });
    assert.deepEqual(
      callParts(body).map((p) => p.thoughtSignature),
      [UNSIGNED_CALL_SIGNATURE, undefined],
    );
  });

  test('Gemini 2.5: unsigned calls stay unsigned (it does not validate them)', () => {
    const { body } = translateRequest('anthropic-messages', 'gemini', anthropicTurn, { model: 'gemini-2.5-flash', stream: true });
    assert.deepEqual(
      callParts(body).map((p) => p.thoughtSignature),
      [undefined, undefined],
    );
  });

  test('a call that kept its own signature sends that one, never the skip value', () => {
    const geminiTurn = {
      contents: [
        { role: 'user', parts: [{ text: 'Write a file.' }] },
        { role: 'model', parts: [{ functionCall: { name: 'write', args: { path: 'a' } }, thoughtSignature: 'c2lnbmVk' }] },
        { role: 'user', parts: [{ functionResponse: { name: 'write', response: { output: 'ok' } } }] },
      ],
    };
    // Gemini in, Gemini out through the neutral model (what a translation of a Gemini client's history does).
    const { body } = translateRequest('gemini', 'gemini', geminiTurn, { model: 'gemini-3-flash', stream: false });
    assert.deepEqual(
      callParts(body).map((p) => p.thoughtSignature),
      ['c2lnbmVk'],
    );
  });

  test('which models validate: Gemini 3 and later, by name, with or without a models/ prefix', () => {
    for (const model of ['gemini-3-pro-preview', 'gemini-3-flash', 'models/gemini-3.1-pro', 'gemini-4-ultra'])
      assert.ok(validatesCallSignatures(model), model);
    for (const model of ['gemini-2.5-flash', 'gemini-2.0-flash', 'gemini-1.5-pro', 'local-coder', 'my-gemini-3-alias-x'])
      assert.ok(!validatesCallSignatures(model), model);
  });
});
