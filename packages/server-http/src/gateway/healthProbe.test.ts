/**
 * The health probe sends the method `providers.<p>.health_check.method`
 * names, to the endpoint it names.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { openAiCompatibleAdapter, UndiciTransport } from '@switchyard/relay';
import { parseConfig } from './config/load.js';
import { createHealthProbe } from './providers.js';

const seen: { method: string; url: string; bodyBytes: number }[] = [];
const upstream = createServer((req, res) => {
  let bodyBytes = 0;
  req.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
  req.on('end', () => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', bodyBytes });
    res.writeHead(200, { 'content-type': 'application/json' }).end(req.method === 'HEAD' ? undefined : '{"data":[]}');
  });
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
const transport = new UndiciTransport({ requestTimeoutMs: 5_000 });
after(async () => {
  await transport.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

function probeFor(healthCheck: string) {
  const config = parseConfig(`
providers:
  p:
    kind: openai-compatible
    base_url: ${base}
    models: [m]
    health_check: ${healthCheck}
`);
  return createHealthProbe({ config: () => config, adapter: () => openAiCompatibleAdapter, transport, credential: () => undefined });
}

test('health_check.method HEAD sends HEAD, with no body, to the configured endpoint', async () => {
  seen.length = 0;
  await probeFor('{ method: HEAD, endpoint: /health }')('p', new AbortController().signal);
  assert.deepEqual(seen, [{ method: 'HEAD', url: '/v1/health', bodyBytes: 0 }]);
  // Without an endpoint, the adapter's own probe URL, still as HEAD.
  seen.length = 0;
  await probeFor('{ method: HEAD }')('p', new AbortController().signal);
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.method, 'HEAD');
});

test('GET stays the default, and POST is sent as POST', async () => {
  seen.length = 0;
  await probeFor('{ endpoint: /health }')('p', new AbortController().signal);
  await probeFor('{ method: POST, endpoint: /health }')('p', new AbortController().signal);
  assert.deepEqual(
    seen.map((s) => s.method),
    ['GET', 'POST'],
  );
});
