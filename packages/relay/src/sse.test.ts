import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { openAiUsage } from './providers/openai.js';
import { lastEventEnd, OpenAiStreamTap, SseEventSplitter } from './sse.js';

const event = (json: object) => `data: ${JSON.stringify(json)}`;
const content = (text: string) => event({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text } }] });
const finish = event({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
const usageOnly = event({ id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 12, completion_tokens: 7 } });

/** Feeds `bytes` cut at `cuts`; returns what the tap forwarded. */
function run(tap: OpenAiStreamTap, bytes: Buffer, cuts: number[]): string {
  let out = '';
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    out += Buffer.from(tap.push(bytes.subarray(from, at))).toString('utf8');
    from = at;
  }
  return out;
}

test('OpenAI tap: any chunking, LF or CRLF; the usage chunk is read, and dropped unless the client asked for it', () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: 'grapheme', maxLength: 20 }), { maxLength: 6 }),
      fc.boolean(),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 8 }),
      (texts, crlf, strip, rawCuts) => {
        const eol = crlf ? '\r\n' : '\n';
        const sep = eol + eol;
        const before = [...texts.map(content), finish].map((e) => e + sep).join('');
        const after = `data: [DONE]${sep}`;
        const stream = Buffer.from(before + usageOnly + sep + after);
        const cuts = [...new Set(rawCuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        const tap = new OpenAiStreamTap({ stripUsageOnlyChunks: strip, usageOf: openAiUsage });
        const out = run(tap, stream, cuts);
        assert.equal(out, strip ? before + after : stream.toString('utf8'));
        assert.deepEqual(tap.usage, { input: 12, output: 7 });
        assert.ok(tap.complete && tap.sawDone);
        assert.equal(tap.pendingBytes, 0);
      },
    ),
  );
});

test('OpenAI tap: "usage" inside a content delta is forwarded untouched and not taken for usage', () => {
  const text = `${content('the "usage" of words')}\n\n${finish}\n\ndata: [DONE]\n\n`;
  const tap = new OpenAiStreamTap({ stripUsageOnlyChunks: true, usageOf: openAiUsage });
  assert.equal(run(tap, Buffer.from(text), []), text);
  assert.equal(tap.usage, undefined);
});

test('lastEventEnd finds the end of the last whole event, wherever the chunk stops', () => {
  assert.equal(lastEventEnd(Buffer.from('data: a\n\ndata: b\n\n')), 18);
  assert.equal(lastEventEnd(Buffer.from('data: a\n\ndata: b')), 9);
  assert.equal(lastEventEnd(Buffer.from('data: a\r\n\r\ndata: b\r\n')), 11);
  assert.equal(lastEventEnd(Buffer.from('data: a\r\n\r\n')), 11);
  assert.equal(lastEventEnd(Buffer.from('data: a\n')), -1);
  assert.equal(lastEventEnd(Buffer.from('')), -1);
});

describe('SseEventSplitter', () => {
  // Line ends only where events end, so that every blank line is one event's end.
  const lineText = fc.string({ unit: 'grapheme', maxLength: 12 }).filter((text) => !/[\r\n]/.test(text));
  const eventsText = fc
    .array(fc.tuple(lineText, fc.constantFrom('\n\n', '\r\n\r\n', '\n\r\n')), { maxLength: 6 })
    .map((events) => events.map(([text, end]) => `data: ${text}${end}`).join(''));

  test('however the stream is cut, even byte by byte, it forwards exactly the whole events, in order', () => {
    fc.assert(
      fc.property(eventsText, lineText, fc.array(fc.nat(), { maxLength: 40 }), fc.boolean(), (whole, tail, rawCuts, bytewise) => {
        const stream = Buffer.from(`${whole}data: ${tail}`);
        const cuts = bytewise
          ? Array.from({ length: stream.length }, (_, i) => i)
          : [...new Set(rawCuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        const splitter = new SseEventSplitter();
        const pieces: Buffer[] = [];
        let from = 0;
        for (const at of [...cuts, stream.length]) {
          const out = splitter.push(stream.subarray(from, at));
          if (out.length > 0) pieces.push(Buffer.from(out));
          from = at;
        }
        const end = Math.max(0, lastEventEnd(stream));
        assert.equal(Buffer.concat(pieces).toString('utf8'), stream.subarray(0, end).toString('utf8'));
        // Each piece ends an event (or is the LF completing the CRLF that ended one, cut from its CR).
        for (let i = 1; i <= pieces.length; i++) {
          const sent = Buffer.concat(pieces.slice(0, i));
          assert.equal(lastEventEnd(sent), sent.length, 'what was forwarded so far ends at an event end');
        }
        assert.equal(splitter.pendingBytes, stream.length - end);
      }),
    );
  });

  test('an event in many small chunks costs its size, not its size squared (through the OpenAI tap)', () => {
    const tap = new OpenAiStreamTap({ stripUsageOnlyChunks: false, usageOf: openAiUsage });
    const piece = Buffer.alloc(1024, 'a');
    const started = performance.now();
    assert.equal(tap.push(Buffer.from('data: ')).length, 0);
    // 8 MiB in 1 KiB chunks: joining everything held on every chunk (as the taps did) copied 32 GiB.
    for (let i = 0; i < 8 * 1024; i++) assert.equal(tap.push(piece).length, 0);
    assert.equal(tap.push(Buffer.from('\n\n')).length, 8 * 1024 * 1024 + 8);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 3_000, `took ${Math.round(elapsed)} ms`);
  });

  test('an event that outgrows the limit without ending throws SSE_EVENT_TOO_LARGE; one within it passes', () => {
    const splitter = new SseEventSplitter(100);
    assert.equal(splitter.push(Buffer.from(`data: ${'x'.repeat(90)}`)).length, 0);
    assert.throws(() => splitter.push(Buffer.from('x'.repeat(20))), { code: 'SSE_EVENT_TOO_LARGE' });
    const fits = new SseEventSplitter(100);
    assert.equal(fits.push(Buffer.from(`data: ${'x'.repeat(90)}`)).length, 0);
    assert.equal(fits.push(Buffer.from('\n\n')).length, 98);
  });
});
