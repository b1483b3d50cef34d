/**
 * The response cache as clients meet it through the gateway: off in the
 * shipped config, and, when turned on, kept per client key, so that no client
 * is ever answered with another client's completion.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { startTestGateway } from '../../test/startTestGateway.js';
import type { Gateway } from './gateway.js';

// An upstream whose every answer is numbered, so a replayed answer shows.
let posts = 0;
const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.method !== 'POST') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
    const n = ++posts;
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `c${n}`,
        object: 'chat.completion',
        created: 0,
        model: 'gpt-4o',
        choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const gateways: Gateway[] = [];
after(async () => {
  for (const gateway of gateways) await gateway.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

async function start(cacheYaml: string) {
  const logLines: string[] = [];
  const { gateway } = await startTestGateway(
    `
port: 0
api-keys: [sk-alice, sk-bob]
server:
  operations:
    health_check: { enabled: false }
${cacheYaml}
providers:
  one:
    kind: openai-compatible
    base_url: http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1
    models: [gpt-4o]
metrics: { port: 0 }
logging: { level: info }
`,
    { logDestination: { write: (line: string) => void logLines.push(line) } },
  );
  gateways.push(gateway);
  const ask = async (key: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      // A sampled request: temperature 1.
      body: JSON.stringify({ model: 'gpt-4o', temperature: 1, messages: [{ role: 'user', content: 'tell me a story' }] }),
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    return body.choices[0]!.message.content;
  };
  return { gateway, ask, logLines };
}

test('with the shipped config, two clients sending the same sampled request both reach the upstream', async () => {
  const { ask } = await start('');
  const before = posts;
  const alice = await ask('sk-alice');
  const bob = await ask('sk-bob');
  const aliceAgain = await ask('sk-alice');
  assert.equal(posts - before, 3, 'every request reached the upstream');
  assert.equal(new Set([alice, bob, aliceAgain]).size, 3, 'each got a fresh sample');
});

test('with the cache on, a client gets its own cached answer and never the other client’s', async () => {
  const { gateway, ask, logLines } = await start('    cache: { enabled: true, sampled: true }');
  const before = posts;
  const alice = await ask('sk-alice');
  const bob = await ask('sk-bob');
  assert.equal(posts - before, 2, 'the second client was not answered from the first one’s entry');
  assert.notEqual(bob, alice);
  assert.equal(await ask('sk-alice'), alice, 'alice is answered from her entry');
  assert.equal(await ask('sk-bob'), bob, 'bob from his');
  assert.equal(posts - before, 2);
  assert.notEqual(await ask('sk-bob', { 'cache-control': 'no-store' }), bob, 'no-store bypasses the cache');
  assert.equal(posts - before, 3);

  const port = gateway.observability.metricsServer!.address()!.port;
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const hits = [...metrics.matchAll(/^svc_cache_hits_total(?:\{[^}]*\})? (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  assert.equal(hits, 2, 'both hits counted');
  const logged = logLines.flatMap((line) => line.split('\n')).filter((line) => line.includes('"cached":true'));
  assert.equal(logged.length, 2, 'both hits are marked cached in the request log');
});
