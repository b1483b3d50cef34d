import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type WsOutlet, wsResponseSink } from './wsResponseSink.js';

/** An outlet that records messages and pretends its buffer holds `buffered` bytes until `flush()`. */
function fakeOutlet(highWaterMark = Number.POSITIVE_INFINITY) {
  const sent: { text: string; kind: string }[] = [];
  let buffered = 0;
  let waiters: (() => void)[] = [];
  const outlet: WsOutlet & { sent: typeof sent; flush(): void; isOpen: boolean } = {
    sent,
    isOpen: true,
    get open() {
      return this.isOpen;
    },
    send(text, kind) {
      sent.push({ text, kind });
      buffered += text.length;
      return buffered < highWaterMark;
    },
    drain() {
      if (buffered < highWaterMark) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    flush() {
      buffered = 0;
      for (const wake of waiters) wake();
      waiters = [];
    },
  };
  return outlet;
}

const event = (type: string, fields: Record<string, unknown> = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;

describe('wsResponseSink', () => {
  test('one message per event, whatever the chunking; comments and non-object data are dropped', () => {
    const stream = `${event('response.created', { sequence_number: 0 })}: keep-alive\n\n${event('response.output_text.delta', { delta: 'héllo' })}data: [DONE]\n\n${event('response.completed', { sequence_number: 2 })}`;
    const bytes = Buffer.from(stream);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), (cuts) => {
        const outlet = fakeOutlet();
        const sink = wsResponseSink(outlet, undefined);
        sink.writeHead(200, { 'content-type': 'text/event-stream' });
        let from = 0;
        for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
          sink.write(bytes.subarray(from, cut));
          from = cut;
        }
        sink.end(bytes.subarray(from));
        assert.deepEqual(
          outlet.sent.map((m) => JSON.parse(m.text).type),
          ['response.created', 'response.output_text.delta', 'response.completed'],
        );
        assert.equal(JSON.parse(outlet.sent[1]!.text).delta, 'héllo', 'a character split across chunks survives');
      }),
      { numRuns: 200 },
    );
  });

  test('the request id tags every message; an in-stream error event goes out as an error', () => {
    const outlet = fakeOutlet();
    const sink = wsResponseSink(outlet, 'req-7');
    sink.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    sink.write(event('response.created'));
    sink.end(event('error', { code: 'upstream_error', message: 'cut off', param: null, sequence_number: 0 }));
    assert.deepEqual(
      outlet.sent.map((m) => [JSON.parse(m.text).type, JSON.parse(m.text).request_id, m.kind]),
      [
        ['response.created', 'req-7', 'event'],
        ['error', 'req-7', 'error'],
      ],
    );
  });

  test('a failure before the stream becomes one error message with the status and the OpenAI error object', () => {
    const outlet = fakeOutlet();
    const sink = wsResponseSink(outlet, 'r');
    sink.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
    sink.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'all_providers_in_cooldown' } }));
    assert.deepEqual(JSON.parse(outlet.sent[0]!.text), {
      type: 'error',
      request_id: 'r',
      status: 429,
      error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'all_providers_in_cooldown' },
    });
    const garbled = fakeOutlet();
    const other = wsResponseSink(garbled, undefined);
    other.writeHead(502, {});
    other.end('<html>bad gateway</html>');
    assert.equal(JSON.parse(garbled.sent[0]!.text).error.code, 'upstream_error');
  });

  test('a plain JSON response (an upstream that ignored stream) is delivered as response.completed', () => {
    const outlet = fakeOutlet();
    const sink = wsResponseSink(outlet, undefined);
    sink.writeHead(200, { 'content-type': 'application/json' });
    sink.end(JSON.stringify({ id: 'resp_1', object: 'response', status: 'completed', output: [] }));
    assert.deepEqual(JSON.parse(outlet.sent[0]!.text), {
      type: 'response.completed',
      response: { id: 'resp_1', object: 'response', status: 'completed', output: [] },
    });
  });

  test('backpressure: past the high-water mark write answers false, and drain waits for the socket', async () => {
    const outlet = fakeOutlet(100);
    const sink = wsResponseSink(outlet, undefined);
    sink.writeHead(200, { 'content-type': 'text/event-stream' });
    assert.equal(sink.write(event('response.created')), true);
    assert.equal(sink.write(event('response.output_text.delta', { delta: 'x'.repeat(100) })), false);
    let drained = false;
    const waiting = sink.drain().then(() => {
      drained = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(drained, false, 'still full');
    outlet.flush();
    await waiting;
    assert.equal(drained, true);
  });

  test('nothing is sent once the socket is gone or the request aborted', () => {
    const outlet = fakeOutlet();
    const controller = new AbortController();
    const sink = wsResponseSink(outlet, undefined, controller.signal);
    sink.writeHead(200, { 'content-type': 'text/event-stream' });
    sink.write(event('response.created'));
    controller.abort();
    assert.equal(sink.closed, true);
    outlet.isOpen = false;
    sink.write(event('response.output_text.delta'));
    sink.end(event('response.completed'));
    assert.equal(outlet.sent.length, 1);
  });
});
