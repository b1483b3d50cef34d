/**
 * A reload that lands while a request is between attempts: the request
 * keeps the route it started with, but a provider the reload removed or
 * disabled is no candidate for its retry. Before, a removed one made the
 * retry throw (a 500 `internal`), and a disabled one still got the request.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { eventually, startFakeOpenAi } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';
import { parseConfig } from './config/load.js';

function configText(first: string, second: string | undefined) {
  return `
port: 0
api-keys: [sk-client]
server:
  operations:
    load_balancing: { strategy: priority }
    health_check: { interval: 10m }
    cooldown: { error_threshold: 100 }
    cache: { enabled: false }
providers:
  first:
    kind: openai-compatible
    base_url: ${first}
    models: [reload-model]
    priority: 0
${second ?? ''}metrics: { enabled: false }
`;
}

const secondProvider = (url: string, enabled: boolean) => `  second:
    kind: openai-compatible
    enabled: ${enabled}
    base_url: ${url}
    models: [reload-model]
    priority: 1
`;

test('a provider removed or disabled while a request waits on another is not tried for its retry', async () => {
  // The preferred provider fails every request with a 500 (the relay retries elsewhere); while `holding`, only once released.
  const held: ServerResponse[] = [];
  let holding = true;
  const fail = (res: ServerResponse) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"boom"}}');
  const failing = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
      if (holding) held.push(res);
      else fail(res);
    });
  });
  await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
  const failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/v1`;
  const second = await startFakeOpenAi({ models: ['reload-model'] });
  const { gateway } = await startTestGateway(configText(failingUrl, secondProvider(second.url, true)));
  after(async () => {
    // Before the upstreams go (close is idempotent: the fixture's own close finds it done).
    await gateway.close();
    await second.close();
    failing.closeAllConnections();
    await new Promise((resolve) => failing.close(resolve));
  });

  for (const [change, reloaded] of [
    ['removed', configText(failingUrl, undefined)],
    ['disabled', configText(failingUrl, secondProvider(second.url, false))],
  ] as const) {
    gateway.reload(parseConfig(configText(failingUrl, secondProvider(second.url, true))));
    holding = true;
    const answer = fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'reload-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await eventually(`${change}: the first attempt to reach the preferred provider`, () => held.length === 1);
    gateway.reload(parseConfig(reloaded));
    const secondCalls = second.chatCount;
    holding = false;
    for (const res of held.splice(0)) fail(res);
    const response = await answer;
    const body = (await response.json()) as { error?: { code?: string } };
    assert.equal(response.status, 502, `${change}: ${JSON.stringify(body)}`);
    assert.equal(body.error?.code, 'upstream_error', `${change}: the preferred provider's failure, not an internal error`);
    assert.equal(second.chatCount, secondCalls, `${change}: the second provider got nothing after the reload`);
  }
});
