import assert from 'node:assert/strict';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { Relay, type RelayCooldowns, type RelayCredentialPool, type RelayHealth } from './relay.js';
import { MemorySink } from './sink.js';
import type { RelayCredential } from './types.js';
import { UndiciTransport } from './upstream.js';

/** What a connection that already answered once does when the next request's first bytes arrive. */
type OnReuse = 'close' | 'partial-answer' | 'answer';

const ANSWER = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});
const RESPONSE = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(ANSWER)}\r\nconnection: keep-alive\r\n\r\n${ANSWER}`;

/**
 * A raw upstream that answers the first request of each connection with keep-alive, then, as the
 * next request on that connection arrives, closes it (the keep-alive race) or does what `onReuse` says.
 */
async function racingUpstream(onReuse: OnReuse = 'close') {
  const state = { requests: 0, connections: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let answered = 0;
    let pending = '';
    socket.on('data', (data) => {
      if (answered > 0) {
        state.requests++;
        if (onReuse === 'close') socket.destroy();
        else if (onReuse === 'partial-answer') socket.end('HTTP/1.1 20', () => socket.destroy());
        else socket.write(RESPONSE);
        if (onReuse !== 'answer') return;
      }
      pending += data.toString('latin1');
      const headersEnd = pending.indexOf('\r\n\r\n');
      if (headersEnd < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(pending.slice(0, headersEnd))?.[1] ?? 0);
      if (pending.length < headersEnd + 4 + length) return;
      pending = '';
      if (answered++ === 0) {
        state.requests++;
        socket.write(RESPONSE);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return { state, url, close };
}

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function setup(onReuse: OnReuse = 'close') {
  const upstream = await racingUpstream(onReuse);
  const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
  cleanups.push(upstream.close, () => transport.close());
  const send = () => transport.send({ url: `${upstream.url}/v1/chat/completions`, method: 'POST', headers: {}, body: '{"n":1}' }, {});
  /** The same request read whole before it resolves, as the relay sends a non-streamed one. */
  const sendBuffered = () =>
    transport.send(
      { url: `${upstream.url}/v1/chat/completions`, method: 'POST', headers: {}, body: '{"n":1}' },
      { buffer: { maxBytes: 1024 * 1024, maxErrorBytes: 1024 } },
    );
  return { upstream, transport, send, sendBuffered };
}

/** Reads a body to its end, then lets undici check the idle socket (for one check phase) so the next request reuses it. */
async function drain(body: AsyncIterable<Uint8Array>): Promise<string> {
  let text = '';
  for await (const chunk of body) text += Buffer.from(chunk).toString('utf8');
  await new Promise(setImmediate);
  return text;
}

test('a pooled connection the upstream closes as a request goes out is retried once on a new connection', async () => {
  const { upstream, send } = await setup();
  assert.equal(await drain((await send()).body), ANSWER);
  const second = await send();
  assert.equal(second.status, 200);
  assert.equal(await drain(second.body), ANSWER);
  // The first request, the second on the closed connection, the second again on a new one.
  assert.equal(upstream.state.requests, 3);
  assert.equal(upstream.state.connections, 2);
});

test('a buffered send is retried the same way on a new connection, and one whose answer began is not', async () => {
  const { upstream, sendBuffered } = await setup();
  assert.equal((await sendBuffered()).bytes?.toString('utf8'), ANSWER);
  await new Promise(setImmediate);
  const second = await sendBuffered();
  assert.equal(second.status, 200);
  assert.equal(second.bytes?.toString('utf8'), ANSWER);
  assert.equal(upstream.state.requests, 3);
  assert.equal(upstream.state.connections, 2);
  const partial = await setup('partial-answer');
  assert.equal((await partial.sendBuffered()).bytes?.toString('utf8'), ANSWER);
  await new Promise(setImmediate);
  await assert.rejects(partial.sendBuffered(), { code: 'UND_ERR_SOCKET' });
  assert.equal(partial.upstream.state.requests, 2);
  assert.equal(partial.upstream.state.connections, 1);
});

test('a connection that closes after the first byte of its answer is not retried', async () => {
  const { upstream, send } = await setup('partial-answer');
  await drain((await send()).body);
  await assert.rejects(send(), { code: 'UND_ERR_SOCKET' });
  assert.equal(upstream.state.requests, 2);
  assert.equal(upstream.state.connections, 1);
});

test('a new connection that closes before answering is not retried', async () => {
  const { upstream, transport } = await setup();
  // Every connection through this proxy closes as soon as a request arrives: none is ever reused.
  const closing = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => {
      upstream.state.requests++;
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => closing.close(resolve)));
  const url = `http://127.0.0.1:${(closing.address() as AddressInfo).port}/v1/chat/completions`;
  await assert.rejects(transport.send({ url, method: 'POST', headers: {}, body: '{}' }, {}));
  assert.equal(upstream.state.requests, 1);
});

test('the relay serves through the keep-alive race and records nothing against provider or credential', async () => {
  const { upstream, transport } = await setup();
  const recorded: string[] = [];
  const cooldowns: RelayCooldowns = {
    recordFailure: (key, failure) => recorded.push(`cooldown ${key} ${failure.kind}`),
    recordSuccess: () => undefined,
  };
  const health: RelayHealth = {
    recordRequest: (provider, sample) => {
      if (!sample.ok) recorded.push(`health ${provider}`);
    },
  };
  const credential: RelayCredential = { id: 'key-1', token: 'sk-test', type: 'api_key' };
  const pool: RelayCredentialPool = {
    acquire: () => credential,
    reportSuccess: () => undefined,
    reportUsage: () => undefined,
    reportFailure: (id, failure) => recorded.push(`credential ${id} ${failure.kind}`),
    refresh: async () => credential,
  };
  const relay = new Relay({
    providers: [{ name: 'racy', kind: 'openai-compatible', baseUrl: `${upstream.url}/v1`, models: ['gpt-4o'] }],
    transport,
    cooldowns,
    health,
    credentials: { pool: () => pool },
  });
  for (let i = 0; i < 2; i++) {
    const sink = new MemorySink();
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] };
    await relay.handle(
      { requestId: `r${i}`, ingress: 'openai-chat', model: 'gpt-4o', stream: false, body, rawBody: Buffer.from(JSON.stringify(body)) },
      sink,
    );
    assert.equal(sink.status, 200, sink.text());
    // One check phase for undici to vet the idle connection, so the second request reuses it.
    await new Promise(setImmediate);
  }
  assert.deepEqual(recorded, []);
  // The second request met the race (the upstream saw it twice), and no more.
  assert.equal(upstream.state.requests, 3);
});
