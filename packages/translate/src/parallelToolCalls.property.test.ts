import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { aggregateStream } from './aggregate.js';
import type { ApiFamily } from './apiFamily.js';
import { codecFor } from './families.js';
import { SseParser } from './sseParser.js';
import { SseStreamDecoder, StreamTranslator } from './streamTranslator.js';

const context = { model: 'client-model', requestId: 'req_1', now: 0 };

interface Call {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** The JSON text of `args`, cut where the upstream cut it. */
  pieces: string[];
}

/** Splits `text` at the given (sorted, deduplicated) cut points. */
function cut(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((n) => n % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const point of [...points, text.length]) {
    if (point > from) out.push(text.slice(from, point));
    from = Math.max(from, point);
  }
  return out;
}

const value = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null));
const call = (i: number): fc.Arbitrary<Call> =>
  fc
    .record({ args: fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), value, { maxKeys: 4 }), cuts: fc.array(fc.nat(), { maxLength: 6 }) })
    .map(({ args, cuts }) => {
      const json = JSON.stringify(args);
      // Parsed back: fast-check's dictionaries have no prototype, parsed JSON has.
      return { id: `call_${i}`, name: `tool_${i}`, args: JSON.parse(json) as Record<string, unknown>, pieces: cut(json, cuts) };
    });
const calls = fc.integer({ min: 1, max: 4 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => call(i))));

/**
 * An OpenAI chat stream of `calls`, their argument pieces interleaved as `picks` says (each pick chooses,
 * among the calls with pieces left, which sends next; a call's first chunk carries its id and name).
 */
function openAiStream(list: Call[], picks: number[], leadingText: boolean): string[] {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const out = [chunk({ role: 'assistant', content: leadingText ? 'Let me look.' : '' })];
  const next = list.map(() => 0);
  const started = list.map(() => false);
  let p = 0;
  for (;;) {
    const open = list.map((_, i) => i).filter((i) => next[i]! < list[i]!.pieces.length || !started[i]);
    if (open.length === 0) break;
    const i = open[(picks[p++] ?? 0) % open.length]!;
    const piece = list[i]!.pieces[next[i]!] ?? '';
    if (next[i]! < list[i]!.pieces.length) next[i]!++;
    const fn = started[i] ? { arguments: piece } : { name: list[i]!.name, arguments: piece };
    out.push(chunk({ tool_calls: [{ index: i, ...(started[i] ? {} : { id: list[i]!.id, type: 'function' }), function: fn }] }));
    started[i] = true;
  }
  out.push(chunk({}, 'tool_calls'), 'data: [DONE]\n\n');
  return out;
}

function translateStream(to: ApiFamily, chunks: string[]): string {
  const translator = StreamTranslator.between('openai-chat', to, context);
  let out = '';
  for (const c of chunks) out += translator.push(Buffer.from(c));
  return out + translator.finish();
}

/** Checks Anthropic's documented order: message_start, blocks one at a time (start, its deltas, stop), message_delta, message_stop. */
function assertAnthropicOrder(sse: string): void {
  const events = new SseParser().push(Buffer.from(sse)).map((e) => JSON.parse(e.data) as { type: string; index?: number });
  assert.equal(events[0]?.type, 'message_start');
  let open: number | undefined;
  let nextIndex = 0;
  for (const event of events.slice(1, -2)) {
    if (event.type === 'content_block_start') {
      assert.equal(open, undefined, 'a block starts while another is open');
      assert.equal(event.index, nextIndex++, 'block indexes count up from 0');
      open = event.index;
    } else if (event.type === 'content_block_delta') assert.equal(event.index, open, 'a delta for a block that is not open');
    else if (event.type === 'content_block_stop') {
      assert.equal(event.index, open, 'a stop for a block that is not open');
      open = undefined;
    } else assert.fail(`unexpected ${event.type} between blocks`);
  }
  assert.equal(open, undefined, 'a block left open');
  assert.deepEqual(
    events.slice(-2).map((e) => e.type),
    ['message_delta', 'message_stop'],
  );
}

/** The tool calls a client of `family` reads back from `sse`. */
function callsIn(family: ApiFamily, sse: string) {
  const decoder = new SseStreamDecoder(codecFor(family).streamDecoder());
  const response = aggregateStream([...decoder.push(Buffer.from(sse)), ...decoder.end()]);
  return response.parts.flatMap((p) => (p.type === 'tool_call' ? [{ name: p.name, args: JSON.parse(p.arguments) as unknown }] : []));
}

describe('parallel tool calls whose argument deltas interleave (OpenAI upstream)', () => {
  test('index 0, then 1, then 0 again: every Anthropic tool_use block gets its whole input, in a valid event order', () => {
    const list: Call[] = [
      { id: 'call_a', name: 'weather', args: { city: 'Paris' }, pieces: ['{"city"', ':"Paris"}'] },
      { id: 'call_b', name: 'time', args: { zone: 'CET' }, pieces: ['{"zone"', ':"CET"}'] },
    ];
    const sse = translateStream('anthropic-messages', openAiStream(list, [0, 1, 0, 1], false));
    assertAnthropicOrder(sse);
    assert.deepEqual(callsIn('anthropic-messages', sse), [
      { name: 'weather', args: { city: 'Paris' } },
      { name: 'time', args: { zone: 'CET' } },
    ]);
  });

  test('property: any interleaving reaches Anthropic, Responses and Gemini clients with every call whole (Anthropic order valid)', () => {
    fc.assert(
      fc.property(calls, fc.array(fc.nat(), { maxLength: 40 }), fc.boolean(), (list, picks, leadingText) => {
        const chunks = openAiStream(list, picks, leadingText);
        const expected = list.map((c) => ({ name: c.name, args: c.args }));
        const anthropic = translateStream('anthropic-messages', chunks);
        assertAnthropicOrder(anthropic);
        // Calls come out in the order they started (the live one first, then those held).
        const started = [...expected].sort(
          (a, b) => chunks.findIndex((c) => c.includes(`"${a.name}"`)) - chunks.findIndex((c) => c.includes(`"${b.name}"`)),
        );
        assert.deepEqual(callsIn('anthropic-messages', anthropic), started);
        assert.deepEqual(callsIn('openai-responses', translateStream('openai-responses', chunks)), started);
        assert.deepEqual(callsIn('gemini', translateStream('gemini', chunks)), started);
        // OpenAI chat addresses calls by index: interleaving passes through as it came.
        assert.deepEqual(callsIn('openai-chat', translateStream('openai-chat', chunks)), started);
      }),
      { numRuns: 150 },
    );
  });
});
