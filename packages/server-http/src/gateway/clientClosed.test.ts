/**
 * A client that closes its request (a chat UI's "stop" button) is no failure of the upstream's:
 * through a real gateway and a slow upstream, three closes in a row, before the first byte and
 * mid-stream, leave the provider out of cooldown and healthy and its credential's streak clean,
 * cost one upstream call each (nobody is listening for a retry), and show as `client_closed` in
 * the events, the metrics and the log, never as an upstream error.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { AttemptEndEvent, RequestEndEvent } from '@switchyard/core-routing';
import { eventually } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'up-model', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

/** What the upstream does, by the client's message: hang before answering, hang after one chunk, or answer. */
type Script = 'hang' | 'one-chunk' | 'answer';

async function slowUpstream() {
  const calls: Script[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (part) => {
      text += part;
    });
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
        return;
      }
      const script = JSON.parse(text).messages[0].content as Script;
      calls.push(script);
      if (script === 'one-chunk') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk('Hel'));
      } else if (script === 'answer') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c2',
            object: 'chat.completion',
            model: 'up-model',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }),
        );
      }
      // 'hang' (and the rest of 'one-chunk'): nothing more until the gateway lets go.
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, calls, port: (server.address() as AddressInfo).port };
}

const upstream = await slowUpstream();
const dir = await mkdtemp(join(tmpdir(), 'gateway-client-closed-'));
const logLines: Record<string, unknown>[] = [];
const { gateway } = await startTestGateway(
  `
port: 0
api-keys: [sk-client]
auth-dir: ${join(dir, 'auths')}
providers:
  slow:
    kind: openai-compatible
    base_url: http://127.0.0.1:${upstream.port}/v1
    models: [up-model]
server:
  operations:
    # Three upstream errors would cool the provider down.
    cooldown: { error_threshold: 3 }
    health_check: { enabled: false }
metrics: { port: 0 }
logging: { level: info }
`,
  { logDestination: { write: (line: string) => logLines.push(JSON.parse(line)) } },
);
after(async () => {
  upstream.server.closeAllConnections();
  await new Promise<void>((resolve) => upstream.server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});
await gateway.credentials.manager.add({ id: 'key-1', provider: 'slow', type: 'api_key', token: 'sk-upstream' });

const ends: RequestEndEvent[] = [];
const attempts: AttemptEndEvent[] = [];
gateway.relay.events.on('request:end', (event) => ends.push(event));
gateway.relay.events.on('attempt:end', (event) => attempts.push(event));

/** Sends a streamed request, and closes it once `leaveWhen` says so. */
async function closeRequest(script: Script, leaveWhen: 'upstream-called' | 'first-chunk'): Promise<void> {
  const callsBefore = upstream.calls.length;
  const endsBefore = ends.length;
  const { port } = new URL(gateway.url);
  const req = request({
    host: '127.0.0.1',
    port,
    path: '/v1/chat/completions',
    method: 'POST',
    headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
  });
  req.on('error', () => {}); // the destroy below
  const firstChunk = new Promise<void>((resolve) => req.on('response', (res) => res.once('data', () => resolve())));
  req.end(JSON.stringify({ model: 'up-model', stream: true, messages: [{ role: 'user', content: script }] }));
  if (leaveWhen === 'first-chunk') await firstChunk;
  else await eventually('the upstream to get the request', () => upstream.calls.length > callsBefore);
  req.destroy();
  await eventually('the gateway to end the request', () => ends.length > endsBefore);
}

/** The gateway's view of the provider and its credential, none of which a client leaving may touch. */
function assertUntouched(when: string): void {
  assert.equal(gateway.cooldowns.isCooling('slow'), false, `${when}: the provider is not cooling`);
  const status = gateway.health.providerStatus('slow');
  assert.deepEqual([status.status, status.errors_last_minute], ['healthy', 0], `${when}: the provider is healthy`);
  const [record] = gateway.credentials.manager.list('slow');
  assert.deepEqual(
    [record?.available, record?.cooldown_until, record?.last_error],
    [true, null, null],
    `${when}: the credential's streak is clean`,
  );
}

test('three closes before the first byte, then three mid-stream: no cooldown, healthy, clean credential, one call each', async () => {
  for (let i = 1; i <= 3; i++) {
    await closeRequest('hang', 'upstream-called');
    assertUntouched(`close ${i} before the first byte`);
    const end = ends.at(-1)!;
    assert.deepEqual(
      [end.outcome, end.errorType, end.httpStatus, end.attempts],
      ['client_closed', 'client_closed', 499, 1],
      `close ${i} before the first byte`,
    );
  }
  for (let i = 1; i <= 3; i++) {
    await closeRequest('one-chunk', 'first-chunk');
    assertUntouched(`close ${i} mid-stream`);
    const end = ends.at(-1)!;
    assert.deepEqual(
      [end.outcome, end.errorType, end.httpStatus, end.attempts],
      ['client_closed', 'client_closed', 200, 1],
      `close ${i} mid-stream (the client had its 200)`,
    );
  }
  assert.deepEqual(upstream.calls, ['hang', 'hang', 'hang', 'one-chunk', 'one-chunk', 'one-chunk'], 'one upstream call per request');
  assert.deepEqual(
    attempts.map((a) => a.outcome),
    Array(6).fill('client_closed'),
  );

  const text = await gateway.observability.registry!.metrics();
  assert.match(text, /svc_requests_total\{provider="slow",model="up-model",status="client_closed"\} 6/);
  assert.match(text, /svc_upstream_attempts_total\{provider="slow",outcome="client_closed"\} 6/);
  assert.doesNotMatch(text, /svc_requests_total\{[^}]*status="error"\}/, 'no request counted as an error');
  assert.doesNotMatch(text, /svc_errors_total\{/, 'no error type counted');
  const requestLines = logLines.filter((line) => String(line.msg).startsWith('request_'));
  assert.deepEqual(
    requestLines.map((line) => [line.msg, line.level]),
    Array(6).fill(['request_client_closed', 'info']),
  );

  // The provider still serves.
  const answered = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'up-model', messages: [{ role: 'user', content: 'answer' }] }),
  });
  assert.equal(answered.status, 200, await answered.clone().text());
  assert.equal(((await answered.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content, 'Hello');
});
