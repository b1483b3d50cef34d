import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { anthropicThinkingMode, type EncodeRequestOptions, translateRequest } from '@switchyard/translate';
import { anthropicAdapter } from './anthropic.js';

const decode = (model: string) => ({ model, stream: false });

/** An OpenAI chat request at `effort`, written for Anthropic's `model`. */
function toAnthropic(model: string, extra: Record<string, unknown>, options?: EncodeRequestOptions) {
  const body = { model, max_tokens: 2000, messages: [{ role: 'user', content: 'Think.' }], ...extra };
  return translateRequest('openai-chat', 'anthropic-messages', body, decode(model), options).body;
}

describe('Anthropic thinking: adaptive for the models that want it, a budget for the others', () => {
  test('the table: Claude 4.6 and later adaptive (Bedrock ids too), earlier and unknown models a budget', () => {
    for (const model of ['claude-opus-4-7', 'claude-opus-4-6', 'claude-sonnet-4-6', 'anthropic.claude-opus-4-7', 'claude-mythos-preview'])
      assert.equal(anthropicThinkingMode(model), 'adaptive', model);
    for (const model of ['claude-sonnet-4-5', 'claude-opus-4-5-20251101', 'claude-haiku-4-5', 'claude-3-7-sonnet-latest', 'my-model'])
      assert.equal(anthropicThinkingMode(model), 'budget', model);
  });

  test('claude-opus-4-7 gets thinking {type: "adaptive"} and output_config.effort, never budget_tokens', () => {
    const body = toAnthropic('claude-opus-4-7', { reasoning_effort: 'medium' });
    assert.deepEqual(body.thinking, { type: 'adaptive' });
    assert.deepEqual(body.output_config, { effort: 'medium' });
    assert.equal(body.max_tokens, 2000, 'no budget to make room for');
    assert.deepEqual(toAnthropic('claude-opus-4-7', { reasoning_effort: 'minimal' }).output_config, { effort: 'low' });
  });

  test('an earlier model keeps the budget', () => {
    const body = toAnthropic('claude-sonnet-4-5', { reasoning_effort: 'medium' });
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 8192 });
    assert.equal(body.output_config, undefined);
  });

  test('a Gemini budget reaches an adaptive model as the nearest level; a budget of 0 asks for no thinking', () => {
    const gemini = (budget: number) => ({
      contents: [{ role: 'user', parts: [{ text: 'Think.' }] }],
      generationConfig: { thinkingConfig: { thinkingBudget: budget } },
    });
    const high = translateRequest('gemini', 'anthropic-messages', gemini(20_000), decode('claude-opus-4-7')).body;
    assert.deepEqual([high.thinking, high.output_config], [{ type: 'adaptive' }, { effort: 'high' }]);
    const off = translateRequest('gemini', 'anthropic-messages', gemini(0), decode('claude-opus-4-7')).body;
    assert.equal(off.thinking, undefined);
  });

  test('no reasoning asked, no thinking field', () => {
    assert.equal(toAnthropic('claude-opus-4-7', {}).thinking, undefined);
  });

  test('a provider overrides the table (options.thinking_modes), first match first; other values are ignored', () => {
    const options = anthropicAdapter.encodeOptions!({
      name: 'claude',
      kind: 'anthropic',
      options: { thinking_modes: { 'claude-opus-4-6*': 'budget', 'house-claude': 'adaptive', 'odd-*': 'sometimes' } },
    });
    assert.deepEqual(options.thinkingModes, { 'claude-opus-4-6*': 'budget', 'house-claude': 'adaptive' });
    assert.deepEqual(toAnthropic('claude-opus-4-6', { reasoning_effort: 'low' }, options).thinking, {
      type: 'enabled',
      budget_tokens: 1024,
    });
    assert.deepEqual(toAnthropic('house-claude', { reasoning_effort: 'low' }, options).thinking, { type: 'adaptive' });
    assert.deepEqual(toAnthropic('claude-opus-4-7', { reasoning_effort: 'low' }, options).thinking, { type: 'adaptive' });
  });
});
