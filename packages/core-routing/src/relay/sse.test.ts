import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { openAiUsage } from './providers/openai.js';
import { lastEventEnd, OpenAiStreamTap } from './sse.js';

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
