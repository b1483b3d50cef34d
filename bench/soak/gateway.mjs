/**
 * The soak benchmark's gateway process (started by `bench/soak.bench.ts` with `--expose-gc` and an IPC
 * channel): the whole gateway with the shipped config, over one provider with three API-key credentials,
 * one of which (`flaky`) the benchmark's upstream fails some of the time. The shipped
 * `cooldown.error_threshold` (5 a minute) stays: a failure another credential of the provider recovered
 * does not count against the provider (docs/configuration.md), so the flaky key never cools it.
 *
 *   soak/gateway.mjs <upstream-url>
 *
 * Plain JavaScript, so that it runs without tsx's loader: its RSS is the gateway's own.
 *
 * Its stdout is the request log (the parent sends it to /dev/null). It answers `{ type: 'stats' }` with
 * `Stats` (declared in `soak.bench.ts`): RSS after `global.gc()`, the event-loop delay since the previous answer, its file
 * descriptors and its established TCP connections.
 */
import { mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gateway, parseConfig } from '@switchyard/server-http';

const gc = globalThis.gc;
if (!gc) throw new Error('run with --expose-gc');
const upstream = process.argv[2];
const authDir = mkdtempSync(join(tmpdir(), 'soak-bench-auths-'));
const gateway = await Gateway.start({
  config: parseConfig(`
port: 0
api-keys: [sk-soak]
auth-dir: ${authDir}
providers:
  soak:
    kind: openai-compatible
    base_url: ${upstream}
    models: [soak-model]
metrics: { port: 0 }
`),
});
for (const id of ['steady-1', 'steady-2', 'flaky']) {
  await gateway.credentials.manager.add({ id, provider: 'soak', type: 'api_key', token: `key-${id}` });
}

const RESOLUTION_MS = 10;
const eld = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
eld.enable();

/** Inodes of this process's sockets, then those of them /proc/net/tcp{,6} lists as ESTABLISHED (state 01). */
function establishedConnections() {
  const inodes = new Set();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {
      // closed between the listing and the readlink
    }
  }
  let count = 0;
  for (const table of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '01' && inodes.has(fields[9])) count++;
    }
  }
  return count;
}

function stats() {
  const ms = (ns) => ns / 1e6 - RESOLUTION_MS;
  // The histogram records the interval between the sampling timer's runs; less the timer's own interval, that is the delay.
  const delay = { mean: ms(eld.mean), p50: ms(eld.percentile(50)), p99: ms(eld.percentile(99)), max: ms(eld.max) };
  gc();
  gc();
  const memory = process.memoryUsage();
  const result = {
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    eld: delay,
    fds: readdirSync('/proc/self/fd').length,
    connections: establishedConnections(),
  };
  // Reset after the collections, so their pause is not booked to the next interval.
  setTimeout(() => eld.reset(), 0);
  return result;
}

process.on('message', (message) => {
  if (message.type === 'stats') process.send({ type: 'stats', stats: stats() });
  if (message.type === 'close') void gateway.close().then(() => process.exit(0));
});
process.send({ type: 'ready', url: gateway.url });
