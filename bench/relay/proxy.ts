/**
 * Benchmark proxies, one per process:
 *   proxy.ts bare <upstream-url>      node:http + undici pass-through: the floor of any proxy
 *   proxy.ts gateway <upstream-url>   Switchyard's data plane and relay, tuned (no metrics, no log, no cache)
 *   proxy.ts defaults <upstream-url>  the whole gateway (`Gateway.start`) with the shipped config: only the
 *                                     provider, the client key, the ports and a scratch auth-dir are set, so
 *                                     metrics are on, the request log is at its default level on stdout, and
 *                                     the response cache is as shipped (off)
 *
 * Each prints `READY <port>` on stdout when it listens, except `defaults`, whose stdout is its request log:
 * it prints `READY <port>` on fd 3 (a pipe the benchmark opens for it).
 */
import { mkdtempSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CooldownManager, HealthMonitor } from '@switchyard/core-routing';
import { Relay, UndiciTransport } from '@switchyard/relay';
import { createDataPlane, Gateway, parseConfig } from '@switchyard/server-http';
import { Agent } from 'undici';

const [mode, upstream] = process.argv.slice(2);
const KEY = 'sk-bench';

function bare() {
  const agent = new Agent({ connections: 64, keepAliveTimeout: 90_000 });
  const target = new URL(upstream!);
  return createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    try {
      const response = await agent.request({
        origin: target.origin,
        path: `${target.pathname}/chat/completions`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      });
      res.writeHead(response.statusCode, { 'content-type': String(response.headers['content-type']) });
      for await (const chunk of response.body) if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
      res.end();
    } catch {
      res.writeHead(502).end();
    }
  });
}

function gateway() {
  // As the gateway wires it: cooldowns and health statistics fed by every request (no probes are
  // started, so they cost nothing between requests), no response cache (every request goes upstream).
  const cooldowns = new CooldownManager();
  const health = new HealthMonitor({ providers: ['bench'], probe: async () => undefined, cooldowns });
  const relay = new Relay({
    providers: [{ name: 'bench', kind: 'openai-compatible', baseUrl: upstream!, models: ['bench-model'] }],
    transport: new UndiciTransport({ maxIdleConnsPerHost: 64 }),
    cooldowns,
    health,
  });
  const dataPlane = createDataPlane({ relay, apiKeys: [KEY] });
  return createServer(async (req, res) => {
    if (!(await dataPlane.handle(req, res))) res.writeHead(404).end();
  });
}

async function defaults() {
  const authDir = mkdtempSync(join(tmpdir(), 'relay-bench-auths-'));
  const started = await Gateway.start({
    config: parseConfig(`
port: 0
api-keys: [${KEY}]
auth-dir: ${authDir}
providers:
  bench:
    kind: openai-compatible
    base_url: ${upstream}
    models: [bench-model]
metrics: { port: 0 }
`),
  });
  writeSync(3, `READY ${new URL(started.url).port}\n`);
}

if (mode === 'defaults') {
  await defaults();
} else {
  const server = mode === 'bare' ? bare() : gateway();
  server.keepAliveTimeout = 120_000;
  server.listen(0, '127.0.0.1', () => console.log(`READY ${(server.address() as AddressInfo).port}`));
}
