import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { StreamTranslator } from '@switchyard/translate';
import { keepAliveFor, passThroughTap, TranslatingTap } from './streamTap.js';
import type { ApiFamily } from './types.js';

const fixture = (family: ApiFamily, name: string) =>
  readFileSync(new URL(`../../../tests/fixtures/${family}/${name}`, import.meta.url), 'utf8');
const noOpenAi = { stripUsageOnlyChunks: false, usageOf: () => undefined };

function feed(tap: ReturnType<typeof passThroughTap>, text: string, size: number): string {
  const bytes = Buffer.from(text);
  let out = '';
  for (let at = 0; at < bytes.length; at += size) out += Buffer.from(tap.push(bytes.subarray(at, at + size))).toString('utf8');
  return out;
}

describe('pass-through taps', () => {
  for (const family of ['anthropic-messages', 'gemini', 'openai-responses'] as const) {
    test(`${family}: forwards the bytes unchanged, whole events only, and reads usage and the end`, () => {
      const text = fixture(family, 'stream.sse');
      for (const size of [1, 7, 64, 4096]) {
        const tap = passThroughTap(family, noOpenAi);
        const out = feed(tap, text, size);
        assert.equal(out, text, `chunk size ${size}`);
        assert.ok(tap.complete);
        assert.deepEqual(tap.usage, { input: 25, output: 8 });
      }
    });

    test(`${family}: a stream cut mid-event forwards only whole events and is not complete`, () => {
      const text = fixture(family, 'stream.sse');
      // Cut inside the first content event after the start.
      const cut = text.slice(0, text.indexOf('The weather') + 5);
      const tap = passThroughTap(family, noOpenAi);
      const out = feed(tap, cut, 16);
      assert.ok(out === '' || out.endsWith('\n\n'));
      assert.ok(cut.startsWith(out) && out.length < cut.length);
      assert.equal(tap.complete, false);
    });
  }

  test('anthropic: a stream that stopped after message_delta still gets its message_stop', () => {
    const text = fixture('anthropic-messages', 'stream.sse');
    const tap = passThroughTap('anthropic-messages', noOpenAi);
    feed(tap, text.slice(0, text.indexOf('event: message_stop')), 64);
    assert.ok(tap.complete, 'the stop reason marks the answer complete');
    assert.equal(tap.finish(), 'event: message_stop\ndata: {"type":"message_stop"}\n\n');
  });

  test('openai-chat: the existing tap, with [DONE] added when missing and usage read', () => {
    const text = fixture('openai-chat', 'stream.sse');
    const tap = passThroughTap('openai-chat', {
      stripUsageOnlyChunks: true,
      usageOf: (json) =>
        (json as { usage?: { prompt_tokens: number; completion_tokens: number } }).usage ? { input: 25, output: 8 } : undefined,
    });
    const out = feed(tap, text.replace('data: [DONE]\n\n', ''), 50);
    assert.equal(out.includes('"usage"'), false, 'the usage-only chunk the client did not ask for is dropped');
    assert.deepEqual(tap.usage, { input: 25, output: 8 });
    assert.equal(tap.finish(), 'data: [DONE]\n\n');
  });

  const rateLimitEvents: Record<ApiFamily, string> = {
    'anthropic-messages': 'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}\n\n',
    gemini: 'data: {"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}\n\n',
    'openai-responses': 'event: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":"slow down"}\n\n',
    'openai-chat': 'data: {"error":{"type":"rate_limit_error","message":"slow down"}}\n\n',
  };
  for (const [family, errorEvent] of Object.entries(rateLimitEvents) as [ApiFamily, string][]) {
    test(`${family}: reads an upstream error event mid-stream (forwarded untouched), and only a real one`, () => {
      const text = fixture(family, 'stream.sse');
      const opening = text.slice(0, text.indexOf('\n\n') + 2);
      const clean = passThroughTap(family, noOpenAi);
      feed(clean, text.replaceAll('The weather', 'The \\"error\\" weather'), 64);
      assert.equal(clean.upstreamError, undefined, 'answer text that mentions "error" is no error event');
      const tap = passThroughTap(family, noOpenAi);
      assert.equal(feed(tap, opening + errorEvent, 64), opening + errorEvent);
      assert.equal(tap.upstreamError?.status, 429);
      assert.equal(tap.upstreamError?.message, 'slow down');
    });
  }

  test('error events and keep-alives are in each family’s own form', () => {
    const error = { status: 502, code: 'upstream_error', message: 'gone' };
    assert.match(
      passThroughTap('anthropic-messages', noOpenAi).fail(error),
      /^event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"gone"/,
    );
    assert.match(passThroughTap('gemini', noOpenAi).fail(error), /^data: \{"error":\{"code":502,"message":"gone","status":"UNAVAILABLE"/);
    assert.match(
      passThroughTap('openai-responses', noOpenAi).fail(error),
      /^event: error\ndata: \{"type":"error","code":"upstream_error","message":"gone"/,
    );
    assert.match(passThroughTap('openai-chat', noOpenAi).fail(error), /^data: \{"error":\{"message":"gone"/);
    assert.equal(keepAliveFor('anthropic-messages'), 'event: ping\ndata: {"type":"ping"}\n\n');
    assert.equal(keepAliveFor('gemini'), ': keep-alive\n\n');
  });
});

describe('translating tap', () => {
  test('usage and completion come from the translated stream; an upstream error event ends it as the upstream meant', () => {
    const context = { model: 'm', requestId: 'r1', now: 0 };
    const tap = new TranslatingTap(StreamTranslator.between('anthropic-messages', 'openai-chat', context), 'openai-chat');
    const out = tap.push(Buffer.from(fixture('anthropic-messages', 'stream.sse')));
    assert.match(String(out), /"content":"The weather "/);
    assert.ok(tap.complete);
    assert.deepEqual(tap.usage, { input: 25, output: 8 });
    assert.ok(String(out).endsWith('data: [DONE]\n\n'), 'message_stop became [DONE] as it arrived');
    assert.equal(tap.finish(), '');
    const failing = new TranslatingTap(StreamTranslator.between('anthropic-messages', 'gemini', context), 'gemini');
    const text = String(
      failing.push(Buffer.from('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n')),
    );
    assert.match(text, /"error":\{"code":529,"message":"Overloaded".*"status":"UNAVAILABLE"/);
    assert.ok(failing.complete);
    assert.equal(failing.finish(), '', 'nothing follows an error event');
  });
});
