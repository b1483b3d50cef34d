/**
 * A client that leaves before its answer is complete (a chat UI's "stop",
 * a closed tab) aborts the upstream call, and that is all it does: the
 * provider and its credential are not held to it (no cooldown, no health
 * error, no credential error), and the request ends once, as the client's
 * doing. With `error_threshold: 1`, a single leave counted against the
 * provider would cool it and turn the next client away with a 429.
 */
import assert from 'node:assert/strict';
import { type IncomingMessage, request } from 'node:http';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { RequestEndEvent } from '@switchyard/core-routing';
import { eventually, startFakeOpenAi } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';

const CLIENT_KEY = 'sk-client';

/** Sends a chat request on its own connection; resolves with the request and, once they come, the response headers. */
function send(gatewayUrl: string, requestId: string, stream: boolean) {
  const req = request(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    agent: false,
    headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json', 'x-request-id': requestId },
  });
  req.on('error', () => undefined);
  const response = new Promise<IncomingMessage>((resolve) => req.on('response', resolve));
  req.end(JSON.stringify({ model: 'gpt-4o', stream, messages: [{ role: 'user', content: 'a long answer, please' }] }));
  return { req, response };
}

test('a client that leaves mid-stream or before the headers costs the provider and its credential nothing', async () => {
  const upstream = await startFakeOpenAi({
    models: ['gpt-4o'],
    // Streams take seconds; non-streaming answers never come: either way the client leaves first.
    behaviour: (received) => (received.body?.stream === true ? { type: 'ok', chunks: 60, chunkDelayMs: 50 } : { type: 'hang' }),
  });
  // auth-dir in the gateway's own directory, removed after the gateway closes (not while it may still write there).
  const { gateway } = await startTestGateway(
    (dir) => `
port: 0
api-keys: [${CLIENT_KEY}]
auth-dir: ${join(dir, 'auths')}
providers:
  steady:
    kind: openai-compatible
    base_url: ${upstream.url}
    models: [gpt-4o]
server:
  operations:
    cooldown: { error_threshold: 1 }
    health_check: { interval: 10m }
    cache: { enabled: false }
metrics: { enabled: false }
`,
    {},
  );
  after(() => upstream.close());
  await gateway.credentials.manager.add({ id: 'only', provider: 'steady', type: 'api_key', token: 'key-only' });
  const ends: RequestEndEvent[] = [];
  gateway.relay.events.on('request:end', (event) => ends.push(event));
  const endsOf = (requestId: string) => ends.filter((event) => event.requestId === requestId);

  const nothingHeldAgainstThem = (requestId: string) => {
    assert.equal(gateway.cooldowns.isCooling('steady'), false, `${requestId}: the provider is not cooled for what the client did`);
    assert.equal(gateway.health.providerStatus('steady').errors_last_minute, 0, `${requestId}: the health record counts no error`);
    const credential = gateway.credentials.manager.describe('only');
    assert.equal(credential.last_error, null, `${requestId}: the credential has no error recorded`);
    assert.equal(credential.cooldown_until, null, `${requestId}: the credential is not cooling`);
    const [end, ...more] = endsOf(requestId);
    assert.equal(more.length, 0, `${requestId}: the request ended once`);
    assert.equal(end?.outcome, 'client_closed', requestId);
    assert.equal(end?.errorType, 'client_closed', `${requestId}: the client's leaving, not an upstream failure`);
  };

  // Mid-stream: the client reads the first bytes of its stream, then hangs up.
  const streamed = send(gateway.url, 'leaves-mid-stream', true);
  const streamResponse = await streamed.response;
  assert.equal(streamResponse.statusCode, 200);
  await new Promise((resolve) => streamResponse.once('data', resolve));
  streamed.req.destroy();
  await eventually('the streamed request to end', () => endsOf('leaves-mid-stream').length > 0);
  nothingHeldAgainstThem('leaves-mid-stream');

  // Before the headers: the upstream has the request and is still thinking when the client hangs up.
  const calls = upstream.chatCount;
  const waiting = send(gateway.url, 'leaves-before-headers', false);
  await eventually('the upstream to have the request', () => upstream.chatCount > calls);
  waiting.req.destroy();
  await eventually('the waiting request to end', () => endsOf('leaves-before-headers').length > 0);
  nothingHeldAgainstThem('leaves-before-headers');

  // The next client is served as if nothing happened, and each request that left ended exactly once.
  const next = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(next.status, 200, await next.clone().text());
  assert.match(await next.text(), /\[DONE\]/);
  assert.equal(endsOf('leaves-mid-stream').length, 1);
  assert.equal(endsOf('leaves-before-headers').length, 1);
});
