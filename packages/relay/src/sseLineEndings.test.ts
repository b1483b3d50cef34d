/**
 * SSE streams may end their lines with CRLF, LF or a lone CR, mixed in one stream (the SSE spec
 * allows all three). However such a stream is cut into chunks, even inside a CRLF, the pass-through
 * taps forward the same events and see the stream end.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import type { RequestEndEvent } from '@switchyard/core-routing';
import fc from 'fast-check';
import { openAiUsage } from './providers/openai.js';
import { Relay } from './relay.js';
import { MemorySink } from './sink.js';
import { lastEventEnd, OpenAiStreamTap, SseEventSplitter } from './sse.js';
import { passThroughTap } from './streamTap.js';
import { UndiciTransport } from './upstream.js';

type Ending = '\n' | '\r\n' | '\r';

/** The data of each event in `text`, as an SSE client reads them (only lines with their ending count). */
function eventsOf(text: string): string[] {
  const events: string[] = [];
  let data: string[] = [];
  for (const [, line] of text.matchAll(/([^\r\n]*)(?:\r\n|\r|\n)/g)) {
    if (line === '') {
      if (data.length > 0) events.push(data.join('\n'));
      data = [];
    } else if (line!.startsWith('data:')) data.push(line!.slice(5).trimStart());
  }
  return events;
}

const lineText = fc.string({ unit: 'grapheme', maxLength: 12 }).filter((text) => !/[\r\n]/.test(text));
const anyEnding = fc.constantFrom<Ending>('\n', '\r\n', '\r');

/**
 * Events of one or two `data:` lines, each line and each blank line ended by any ending. An ending
 * after a lone CR never starts with LF: the two would be one CRLF, as any reader takes them.
 */
function withEndings(lines: string[][], endings: Ending[]): string {
  let text = '';
  let k = 0;
  const end = () => {
    let ending = endings[k++ % endings.length]!;
    if (text.endsWith('\r') && ending === '\n') ending = '\r\n';
    text += ending;
  };
  for (const event of lines) {
    for (const line of event) {
      text += line;
      end();
    }
    end();
  }
  return text;
}

const streams = fc
  .tuple(
    fc.array(fc.array(lineText, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 6 }),
    fc.array(anyEnding, { minLength: 1, maxLength: 12 }),
  )
  .map(([events, endings]) =>
    withEndings(
      events.map((lines) => lines.map((line) => `data: ${line}`)),
      endings,
    ),
  );

/** Cut points of `length` bytes: random ones, or every byte. */
const cutsOf = (length: number, raw: number[], bytewise: boolean) =>
  bytewise ? Array.from({ length }, (_, i) => i) : [...new Set(raw.map((c) => c % (length + 1)))].sort((a, b) => a - b);

function pushAll(push: (chunk: Buffer) => Uint8Array | string, stream: Buffer, cuts: number[]): string {
  let out = '';
  let from = 0;
  for (const at of [...cuts, stream.length]) {
    const piece = push(stream.subarray(from, at));
    out += typeof piece === 'string' ? piece : Buffer.from(piece).toString('utf8');
    from = at;
  }
  return out;
}

test('CR, LF and CRLF endings, mixed and cut anywhere: the splitter forwards the same events, each as soon as it ends', () => {
  fc.assert(
    fc.property(streams, fc.array(fc.nat(), { maxLength: 40 }), fc.boolean(), (text, rawCuts, bytewise) => {
      const stream = Buffer.from(text);
      const splitter = new SseEventSplitter();
      const pieces: Buffer[] = [];
      const cuts = cutsOf(stream.length, rawCuts, bytewise);
      let from = 0;
      for (const at of [...cuts, stream.length]) {
        const out = splitter.push(stream.subarray(from, at));
        if (out.length > 0) pieces.push(Buffer.from(out));
        from = at;
      }
      const forwarded = Buffer.concat(pieces).toString('utf8');
      assert.deepEqual(eventsOf(forwarded), eventsOf(text));
      // Each piece ends an event (or is the LF completing the CRLF that ended one, cut from its CR).
      for (let i = 1; i <= pieces.length; i++) {
        const sent = Buffer.concat(pieces.slice(0, i));
        assert.equal(lastEventEnd(sent), sent.length, 'what was forwarded so far ends at an event end');
      }
      // Bytes pass as they came, none held back at the end (an LF completing a CRLF goes at once).
      assert.equal(forwarded, text);
      assert.equal(splitter.pendingBytes, 0);
    }),
  );
});

test('a CR at the end of one chunk and an LF at the start of the next are one line ending, not a blank line', () => {
  const splitter = new SseEventSplitter();
  assert.equal(splitter.push(Buffer.from('data: a\r')).length, 0);
  assert.equal(splitter.push(Buffer.from('\ndata: b\r')).length, 0, 'data: a and data: b are one event');
  assert.equal(Buffer.from(splitter.push(Buffer.from('\n\r\n'))).toString(), 'data: a\r\ndata: b\r\n\r\n');
  assert.equal(splitter.pendingBytes, 0);
  assert.equal(lastEventEnd(Buffer.from('data: a\rdata: b\r\rdata: c\r')), 17);
  assert.equal(lastEventEnd(Buffer.from('data: a\r\r\ndata: b')), 10);
});

test('an Anthropic stream with CR-only line endings passes through whole, with its usage, and completes', () => {
  const events = [
    'event: message_start\rdata: {"type":"message_start","message":{"usage":{"input_tokens":9,"output_tokens":1}}}',
    'event: content_block_delta\rdata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}',
    'event: message_delta\rdata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}',
    'event: message_stop\rdata: {"type":"message_stop"}',
  ];
  const text = events.map((e) => `${e}\r\r`).join('');
  fc.assert(
    fc.property(fc.array(fc.nat(), { maxLength: 20 }), fc.boolean(), (rawCuts, bytewise) => {
      const tap = passThroughTap('anthropic-messages', { stripUsageOnlyChunks: false, usageOf: () => undefined });
      const stream = Buffer.from(text);
      assert.equal(
        pushAll((chunk) => tap.push(chunk), stream, cutsOf(stream.length, rawCuts, bytewise)),
        text,
      );
      assert.ok(tap.complete);
      assert.equal(tap.finish(), '');
      assert.deepEqual(tap.usage, { input: 9, output: 4 });
    }),
  );
});

test('an OpenAI stream with mixed endings: any chunking forwards the same events, the usage chunk read and dropped', () => {
  const usage = 'data: {"id":"c","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7}}';
  const finish = 'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}';
  fc.assert(
    fc.property(
      fc.array(lineText, { maxLength: 4 }),
      fc.array(anyEnding, { minLength: 1, maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 30 }),
      fc.boolean(),
      fc.boolean(),
      (texts, endings, rawCuts, bytewise, strip) => {
        const content = texts.map((t) => `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { content: t } }] })}`);
        const text = withEndings(
          [...content, finish, usage, 'data: [DONE]'].map((line) => [line]),
          endings,
        );
        const tap = new OpenAiStreamTap({ stripUsageOnlyChunks: strip, usageOf: openAiUsage });
        const stream = Buffer.from(text);
        const out = pushAll((chunk) => tap.push(chunk), stream, cutsOf(stream.length, rawCuts, bytewise));
        const expected = eventsOf(text).filter((data) => !(strip && data.includes('"choices":[]')));
        assert.deepEqual(eventsOf(out), expected);
        assert.deepEqual(tap.usage, { input: 12, output: 7 });
        assert.ok(tap.complete && tap.sawDone);
      },
    ),
  );
});

test('the relay streams an upstream that ends its lines in lone CRs to the client, complete, not as a 502', async () => {
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\r\r`;
  const usage = 'data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}\r\r';
  // Written in pieces that cut events, so each blank line has to be found where it is.
  const body = `${chunk({ role: 'assistant', content: '' })}${chunk({ content: 'Hel' })}${chunk({ content: 'lo' })}${chunk({}, 'stop')}${usage}data: [DONE]\r\r`;
  const upstream = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let at = 0; at < body.length; at += 37) res.write(body.slice(at, at + 37));
    res.end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
  after(async () => {
    await transport.close();
    await new Promise((resolve) => upstream.close(resolve));
  });
  const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const relay = new Relay({ providers: [{ name: 'cr', kind: 'openai-compatible', baseUrl, models: ['gpt-4o'] }], transport });
  const ends: RequestEndEvent[] = [];
  relay.events.on('request:end', (e) => ends.push(e));
  const sink = new MemorySink();
  const request = { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] };
  await relay.handle(
    {
      requestId: 'cr-1',
      ingress: 'openai-chat',
      model: 'gpt-4o',
      stream: true,
      body: request,
      rawBody: Buffer.from(JSON.stringify(request)),
    },
    sink,
  );
  assert.equal(sink.status, 200, sink.text());
  assert.equal(ends.at(-1)?.outcome, 'success');
  assert.deepEqual(ends.at(-1)?.tokens, { input: 5, output: 2 });
  const events = eventsOf(sink.text());
  assert.equal(events.at(-1), '[DONE]');
  assert.equal(events.map((data) => (data === '[DONE]' ? '' : (JSON.parse(data).choices[0]?.delta?.content ?? ''))).join(''), 'Hello');
});
