/**
 * Many long streams through one provider at once, as a real deployment sees
 * them: with the shipped pool settings each stream gets its own upstream
 * connection at once (none waits for another to end), and once they end the
 * gateway keeps only `max_idle_conns_per_host` of those connections.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';

const STREAMS = 200;

// A scripted upstream: each streamed chat completion sends its first chunk, then holds until released.
let open = 0;
let peak = 0;
const held: ServerResponse[] = [];
const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.method !== 'POST') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(chunk('first '))}\n\n`);
    held.push(res);
  });
});
upstream.on('connection', (socket) => {
  open++;
  peak = Math.max(peak, open);
  socket.on('close', () => open--);
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));

function chunk(content: string) {
  return {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'gpt-4o',
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  };
}

function release(): void {
  for (const res of held.splice(0)) {
    res.write(`data: ${JSON.stringify(chunk('last'))}\n\n`);
    res.end('data: [DONE]\n\n');
  }
}

// The pool block is left out on purpose: the shipped defaults are what is tested.
const { gateway } = await startTestGateway(`
port: 0
api-keys: [sk-client]
server:
  operations:
    health_check: { enabled: false }
providers:
  one:
    kind: openai-compatible
    base_url: http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1
    models: [gpt-4o]
metrics: { enabled: false }
`);
after(async () => {
  release();
  await gateway.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

test(`${STREAMS} concurrent streams through one provider each get an upstream connection at once, and all complete`, async () => {
  const streams = Array.from({ length: STREAMS }, async (_, i) => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: `stream ${i}` }] }),
    });
    return { status: response.status, text: await response.text() };
  });
  try {
    // Every stream is open upstream at the same time; with a cap on open connections the rest would wait here.
    await eventually(`${STREAMS} streams held open at the upstream at once`, () => held.length === STREAMS, 30_000);
  } catch {
    assert.fail(`only ${held.length} of ${STREAMS} streams were open at the upstream at once (peak ${peak} connections)`);
  } finally {
    release();
  }
  const results = await Promise.all(streams);
  const failures = results.filter((r) => r.status !== 200 || !r.text.includes('[DONE]') || !r.text.includes('last'));
  assert.equal(failures.length, 0, `failed streams: ${JSON.stringify(failures.slice(0, 3))}`);
  assert.ok(peak >= STREAMS, `peak of concurrent upstream connections ${peak}`);

  // Idle, the gateway keeps max_idle_conns_per_host (10) of them and closes the rest.
  await eventually(`idle upstream connections to drop to 10 (open ${open})`, () => open <= 10);
  assert.equal(gateway.transport.idleConnections().total, open, 'the transport counts what the upstream sees');
  assert.ok(open > 0, 'idle connections are kept for reuse');
});
