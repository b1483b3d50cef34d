/**
 * The workflow's SSE reader: a multi-byte UTF-8 character split across chunks arrives whole,
 * at every split point; SSE line endings and multi-line data follow the rules; one event past
 * the cap ends the stream as `upstream_failed` after the events before it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkflowError } from '../errors.js';
import { readSseEvents } from './sseEvents.js';

async function* chunks(...parts: (Uint8Array | string)[]): AsyncGenerator<Uint8Array | string> {
  for (const part of parts) yield part;
}

async function collect(body: AsyncIterable<Uint8Array | string>, maxEventChars?: number) {
  const out: { event: string | undefined; data: string }[] = [];
  for await (const e of readSseEvents(body, maxEventChars === undefined ? {} : { maxEventChars }))
    out.push({ event: e.event, data: e.data });
  return out;
}

test('a multi-byte character split across chunks arrives whole, wherever the split falls', async () => {
  const message = 'héllo — 你好 🚀';
  const bytes = Buffer.from(`event: message_update\ndata: ${JSON.stringify({ message })}\n\n`, 'utf8');
  for (let cut = 1; cut < bytes.length; cut++) {
    const events = await collect(chunks(bytes.subarray(0, cut), bytes.subarray(cut)));
    assert.deepEqual(events.length, 1, `split at byte ${cut}`);
    assert.equal(JSON.parse(events[0]!.data).message, message, `split at byte ${cut}`);
  }
  // One byte a chunk: the rocket's four bytes arrive in four chunks.
  const byByte = await collect(chunks(...[...bytes].map((b) => Uint8Array.of(b))));
  assert.equal(JSON.parse(byByte[0]!.data).message, message);
  assert.ok(!byByte[0]!.data.includes('\uFFFD'));
});

test('CRLF and CR line endings, comments and multi-line data follow the SSE rules', async () => {
  const events = await collect(
    chunks(': connected\r\n\r\nevent: a\r\ndata: one\r\ndata: two\r\n\r', '\nevent: b\rdata: three\r\rdata: {"x":1}\n\ndata: unterminated'),
  );
  // An event the stream ends inside is dropped, as the SSE rules say.
  assert.deepEqual(events, [
    { event: 'a', data: 'one\ntwo' },
    { event: 'b', data: 'three' },
    { event: undefined, data: '{"x":1}' },
  ]);
});

test('an event past the cap ends the stream as upstream_failed, after the events before it', async () => {
  const seen: string[] = [];
  const body = chunks('data: small\n\n', `data: ${'x'.repeat(600)}`, `${'y'.repeat(600)}\n\n`, 'data: never\n\n');
  await assert.rejects(
    (async () => {
      for await (const e of readSseEvents(body, { maxEventChars: 1000, source: 'test stream' })) seen.push(e.data);
    })(),
    (e: unknown) =>
      e instanceof WorkflowError && e.code === 'upstream_failed' && e.message === 'test stream sent an event over 1000 characters',
  );
  assert.deepEqual(seen, ['small']);
  // Many events that are each under the cap are fine, however long the stream.
  const many = await collect(chunks(...Array.from({ length: 50 }, (_, i) => `data: ${String(i).padStart(500, '0')}\n\n`)), 1000);
  assert.equal(many.length, 50);
});
