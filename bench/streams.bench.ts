/**
 * Concurrent long streams: 200 streaming requests at once, each lasting one
 * second at the upstream, sent directly and through the gateway with its
 * shipped connection-pool settings, in one run. The figure is the wall time
 * through the gateway against the direct wall time (target ≤ 1.5×): a cap on
 * open upstream connections (as `max_idle_conns_per_host` once was) shows as
 * a multiple of it, since streams past the cap wait for one to end.
 *
 * The upstream, the gateway and the clients share this process: what is
 * measured is whether streams wait for each other, not the proxy's CPU cost
 * (that is `pnpm bench relay`).
 *
 *   pnpm bench streams [--smoke]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gateway, parseConfig } from '@switchyard/server-http';
import { Agent, fetch } from 'undici';
import { report, SMOKE } from './lib.js';

const STREAMS = SMOKE ? 20 : 200;
const STREAM_MS = SMOKE ? 200 : 1000;
const CHUNKS = 5;

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'bench-model', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

// A stream of CHUNKS events spread over STREAM_MS.
const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.method !== 'POST') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(chunk(`part ${++sent} `));
      if (sent === CHUNKS) {
        clearInterval(timer);
        res.end('data: [DONE]\n\n');
      }
    }, STREAM_MS / CHUNKS);
  });
});
upstream.keepAliveTimeout = 120_000;
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;

// The shipped defaults, but for the provider and the listening ports.
const gateway = await Gateway.start({
  config: parseConfig(`
port: 0
providers:
  upstream:
    kind: openai-compatible
    base_url: ${upstreamUrl}
    models: [bench-model]
metrics: { port: 0 }
`),
  logDestination: { write() {} },
});

// The client side never caps: as many connections as requests.
const client = new Agent({ connections: null, keepAliveTimeout: 120_000 });
const body = JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'stream' }] });

async function wave(base: string): Promise<{ ms: number; failures: number }> {
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: STREAMS }, async () => {
      try {
        const response = await fetch(`${base}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          dispatcher: client,
        });
        const text = await response.text();
        return response.status === 200 && text.includes('[DONE]');
      } catch {
        return false;
      }
    }),
  );
  return { ms: performance.now() - started, failures: results.filter((ok) => !ok).length };
}

try {
  // One wave each to open the connections, then the measured ones.
  await wave(upstreamUrl);
  await wave(`${gateway.url}/v1`);
  const direct = await wave(upstreamUrl);
  const proxied = await wave(`${gateway.url}/v1`);
  const ratio = proxied.ms / direct.ms;
  report(`${STREAMS} concurrent streams of ${STREAM_MS} ms, default pool settings`, [
    { name: 'direct wall time', value: direct.ms, unit: 'ms' },
    { name: 'through the gateway', value: proxied.ms, unit: 'ms', baseline: direct.ms, target: '≤ 1.5×', pass: ratio <= 1.5 },
    {
      name: 'failed streams (direct + gateway)',
      value: direct.failures + proxied.failures,
      unit: '',
      target: '0',
      pass: direct.failures + proxied.failures === 0,
    },
  ]);
  if (!SMOKE && (ratio > 1.5 || direct.failures + proxied.failures > 0)) process.exitCode = 1;
} finally {
  await gateway.close();
  await client.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
}
