import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiFamily } from './apiFamily.js';
import { statusOfErrorType } from './errorShapes.js';
import { StreamTranslator } from './streamTranslator.js';

const context = { model: 'client-model', requestId: 'req_1', now: 0 };

/** The client's SSE text for an upstream stream that is only `event`. */
function translate(from: ApiFamily, to: ApiFamily, event: string): string {
  return StreamTranslator.between(from, to, context).push(Buffer.from(event));
}

const anthropicError = (type: string, message: string) =>
  `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;

/** The JSON of the first `data:` line of `sse`. */
function firstData(sse: string): { error: Record<string, unknown> } {
  const line = sse.split('\n').find((l) => l.startsWith('data: '));
  assert.ok(line, `no data line in ${sse}`);
  return JSON.parse(line.slice(6));
}

describe("an upstream stream's error event keeps the status its type stands for", () => {
  test("Anthropic's documented error types map to their HTTP statuses", () => {
    assert.deepEqual(
      [
        'invalid_request_error',
        'authentication_error',
        'permission_error',
        'not_found_error',
        'request_too_large',
        'rate_limit_error',
        'api_error',
        'overloaded_error',
      ].map(statusOfErrorType),
      [400, 401, 403, 404, 413, 429, 500, 529],
    );
    assert.equal(statusOfErrorType('something_new'), undefined);
  });

  test('Anthropic overloaded_error reaches a Gemini client as 529 UNAVAILABLE, rate_limit_error as 429 RESOURCE_EXHAUSTED', () => {
    const overloaded = firstData(translate('anthropic-messages', 'gemini', anthropicError('overloaded_error', 'Overloaded')));
    assert.equal(overloaded.error.code, 529);
    assert.equal(overloaded.error.status, 'UNAVAILABLE');
    assert.equal(overloaded.error.message, 'Overloaded');
    const limited = firstData(translate('anthropic-messages', 'gemini', anthropicError('rate_limit_error', 'slow down')));
    assert.equal(limited.error.code, 429);
    assert.equal(limited.error.status, 'RESOURCE_EXHAUSTED');
  });

  test('an OpenAI chat client gets the error type (rate_limit_error), not a server error', () => {
    const error = firstData(translate('anthropic-messages', 'openai-chat', anthropicError('rate_limit_error', 'slow down'))).error;
    assert.equal(error.type, 'rate_limit_error');
    assert.equal(error.message, 'slow down');
  });

  test("an OpenAI chat upstream's in-stream rate limit reaches an Anthropic client as rate_limit_error, not api_error", () => {
    const chunk = `data: ${JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_error' } })}\n\n`;
    const sse = translate('openai-chat', 'anthropic-messages', chunk);
    assert.match(sse, /^event: error\n/);
    assert.equal(firstData(sse).error.type, 'rate_limit_error');
    const failed = translate(
      'openai-responses',
      'gemini',
      `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', response: { error: { code: 'rate_limit_exceeded', message: 'slow' } } })}\n\n`,
    );
    assert.equal(firstData(failed).error.status, 'RESOURCE_EXHAUSTED');
  });

  test('an unknown type stays a 500', () => {
    assert.equal(firstData(translate('anthropic-messages', 'gemini', anthropicError('weird_error', 'hm'))).error.code, 500);
  });
});
