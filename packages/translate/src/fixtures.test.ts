import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { aggregateStream } from './aggregate.js';
import type { ApiFamily } from './apiFamily.js';
import { describeUpstreamError } from './errorShapes.js';
import { API_FAMILIES, codecFor, translateResponse } from './families.js';
import type { ChatRequest, ChatResponse, Part, StreamEvent } from './ir.js';
import { SseStreamDecoder, StreamTranslator } from './streamTranslator.js';

const fixtureRoot = new URL('../../../tests/fixtures/', import.meta.url);
const fixture = (family: ApiFamily, name: string) => readFileSync(new URL(`${family}/${name}`, fixtureRoot), 'utf8');
const json = (family: ApiFamily, name: string) => JSON.parse(fixture(family, name)) as Record<string, unknown>;
const context = { model: 'client-model', requestId: 'req_fixture_1', now: Date.UTC(2026, 0, 1) };

/** Ids become their order of appearance; fields only one family has are left out. */
function normalizeRequest(request: ChatRequest) {
  const ids = new Map<string, string>();
  const id = (raw: string) => {
    if (!ids.has(raw)) ids.set(raw, `id${ids.size}`);
    return ids.get(raw)!;
  };
  const part = (p: Part): unknown => {
    switch (p.type) {
      case 'tool_call':
        return { type: p.type, id: id(p.id), name: p.name, arguments: JSON.parse(p.arguments) };
      case 'tool_result':
        return { type: p.type, callId: id(p.callId), content: p.content, isError: p.isError === true };
      case 'image':
        return { type: p.type, source: p.source.kind === 'url' ? { kind: 'url', url: p.source.url } : p.source };
      default:
        return p;
    }
  };
  return {
    system: request.system,
    messages: request.messages.map((m) => ({ role: m.role, parts: m.parts.map(part) })),
    tools: request.tools?.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    toolChoice: request.toolChoice,
    maxTokens: request.maxTokens,
    temperature: request.temperature,
  };
}

const decodeFixture = (family: ApiFamily) => codecFor(family).decodeRequest(json(family, 'request.json'), { model: 'm', stream: false });

describe('golden request fixtures', () => {
  const expected = normalizeRequest(decodeFixture('openai-chat'));

  test('the four families’ fixtures decode to the same conversation', () => {
    assert.equal(expected.messages.length, 3);
    assert.deepEqual(expected.system, ['You are a weather assistant.']);
    for (const family of API_FAMILIES) assert.deepEqual(normalizeRequest(decodeFixture(family)), expected, family);
  });

  for (const from of API_FAMILIES)
    for (const to of API_FAMILIES)
      test(`${from} → ${to} → back keeps the conversation`, () => {
        const source = decodeFixture(from);
        const encoded = codecFor(to).encodeRequest(structuredClone(source), {});
        const decoded = codecFor(to).decodeRequest(encoded, { model: 'm', stream: false });
        assert.deepEqual(normalizeRequest(decoded), normalizeRequest(source));
        assert.deepEqual(decoded.dropped, [], 'nothing in the fixture is lost');
      });
});

function summary(response: ChatResponse) {
  return {
    parts: response.parts.map((p) => (p.type === 'tool_call' ? { type: p.type, name: p.name, arguments: JSON.parse(p.arguments) } : p)),
    stopReason: response.stopReason,
    input: response.usage.input,
    output: response.usage.output,
  };
}

const TEXT_ANSWER = { parts: [{ type: 'text', text: 'The weather in Paris is sunny.' }], stopReason: 'end_turn', input: 25, output: 8 };
const TOOL_ANSWER = {
  parts: [{ type: 'tool_call', name: 'get_weather', arguments: { location: 'Paris' } }],
  stopReason: 'tool_use',
  input: 25,
  output: 8,
};

describe('golden response fixtures', () => {
  for (const from of API_FAMILIES) {
    test(`${from}: the text and tool answers decode as documented`, () => {
      assert.deepEqual(summary(codecFor(from).decodeResponse(json(from, 'response.json'))), TEXT_ANSWER);
      assert.deepEqual(summary(codecFor(from).decodeResponse(json(from, 'response-tool.json'))), TOOL_ANSWER);
    });
    for (const to of API_FAMILIES)
      test(`${from} → ${to}: translated answers read back the same`, () => {
        for (const [name, expected] of [
          ['response.json', TEXT_ANSWER],
          ['response-tool.json', TOOL_ANSWER],
        ] as const) {
          const { body } = translateResponse(from, to, json(from, name), context);
          assert.deepEqual(summary(codecFor(to).decodeResponse(JSON.parse(JSON.stringify(body)))), expected, name);
        }
      });
  }
});

/** Splits text into chunks at arbitrary (seeded) points, as a network would. */
function chunks(text: string, seed: number): Uint8Array[] {
  const bytes = Buffer.from(text);
  const out: Uint8Array[] = [];
  let at = 0;
  let s = seed;
  while (at < bytes.length) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const size = 1 + (s % 97);
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

function readBack(family: ApiFamily, sse: string): StreamEvent[] {
  const decoder = new SseStreamDecoder(codecFor(family).streamDecoder());
  return [...decoder.push(Buffer.from(sse)), ...decoder.end()];
}

/** The structural rules of each family's stream. */
function assertWellFormed(family: ApiFamily, sse: string): void {
  assert.equal(/^data: *$/m.test(sse), false, 'no empty data frames');
  const events = sse.split('\n\n').filter((e) => e.length > 0);
  const names = events.map((e) => /^event: (.+)$/m.exec(e)?.[1]);
  if (family === 'openai-chat') assert.equal(events.at(-1), 'data: [DONE]');
  if (family === 'anthropic-messages') {
    assert.equal(names[0], 'message_start');
    assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop']);
    const opened = names.filter((n) => n === 'content_block_start').length;
    assert.equal(names.filter((n) => n === 'content_block_stop').length, opened, 'every block is closed');
  }
  if (family === 'openai-responses') {
    assert.equal(names[0], 'response.created');
    assert.equal(names.at(-1), 'response.completed');
    const sequence = events.map((e) => (JSON.parse(/^data: (.+)$/m.exec(e)![1]!) as { sequence_number: number }).sequence_number);
    assert.deepEqual(
      sequence,
      sequence.map((_, i) => i),
    );
  }
  if (family === 'gemini') {
    const last = JSON.parse(events.at(-1)!.slice(6)) as { candidates: { finishReason?: string }[] };
    assert.ok(last.candidates[0]?.finishReason, 'the last chunk carries finishReason');
  }
}

describe('golden stream fixtures', () => {
  for (const from of API_FAMILIES) {
    test(`${from}: the streams decode to the documented answers`, () => {
      assert.deepEqual(summary(aggregateStream(readBack(from, fixture(from, 'stream.sse')))), TEXT_ANSWER);
      assert.deepEqual(summary(aggregateStream(readBack(from, fixture(from, 'stream-tool.sse')))), TOOL_ANSWER);
    });
    for (const to of API_FAMILIES)
      test(`${from} → ${to}: translated streams are well formed and read back the same, however the bytes are split`, () => {
        for (const [name, expected] of [
          ['stream.sse', TEXT_ANSWER],
          ['stream-tool.sse', TOOL_ANSWER],
        ] as const) {
          for (const seed of [1, 7, 42]) {
            const translator = StreamTranslator.between(from, to, { ...context, includeUsage: true });
            let out = '';
            for (const chunk of chunks(fixture(from, name), seed)) out += translator.push(chunk);
            assert.ok(translator.complete, 'the upstream stream reached its end');
            out += translator.finish();
            assertWellFormed(to, out);
            assert.deepEqual(summary(aggregateStream(readBack(to, out))), expected, `${name} seed ${seed}`);
            assert.deepEqual(translator.usage, aggregateStream(readBack(from, fixture(from, name))).usage);
          }
        }
      });
  }
});

describe('golden error fixtures', () => {
  test('every family’s error body is read, with Google’s RetryInfo', () => {
    for (const family of API_FAMILIES) {
      const described = describeUpstreamError(json(family, 'error.json'));
      assert.ok(described && described.message.length > 20, family);
    }
    assert.equal(describeUpstreamError(json('gemini', 'error.json'))?.retryDelayMs, 27_000);
    assert.equal(describeUpstreamError(json('anthropic-messages', 'error.json'))?.type, 'rate_limit_error');
    assert.equal(describeUpstreamError(json('openai-chat', 'error.json'))?.code, 'rate_limit_exceeded');
  });
});
