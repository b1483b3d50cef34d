/**
 * Soak: the gateway with the shipped config under a steady open-loop load for a long time, watching
 * what should stay flat. 500 requests/s for 200 s (100,000 requests), a fresh body each, half plain and
 * half streamed (five events over 100 ms), over one provider with three credentials of which one is
 * flaky: the upstream fails 30% of its calls (429 with `Retry-After: 1`, or 500, in turn), so rotation
 * and the credential cooldowns run all along. The first 20,000 requests are the warm-up.
 *
 * The gateway runs in its own process (`bench/soak/gateway.mjs`, the built packages without tsx, `--expose-gc`); the
 * upstream and the load generator run here. Every {@link SNAPSHOT_SECONDS} the gateway reports its RSS
 * after `global.gc()`, the event-loop delay over the interval (`monitorEventLoopDelay`), its file
 * descriptors (`/proc/self/fd`) and its established TCP connections. The run fails (exit 1) if RSS at
 * the end exceeds RSS after the warm-up by more than 10%, or if fewer than 99% of the requests answered 200. In `--smoke` (a few seconds, 1,000 requests)
 * the figures are reported and the rule is not enforced: a few seconds is all noise.
 *
 *   pnpm build && pnpm bench soak [--smoke]
 */
import { fork } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { type Row, report, SMOKE } from './lib.js';

/** What the gateway process reports (`bench/soak/gateway.mjs`). */
interface Stats {
  /** Resident set size after two full collections, bytes. */
  rss: number;
  heapUsed: number;
  /** Event-loop delay since the previous reading, ms, beyond the 10 ms sampling timer. */
  eld: { mean: number; p50: number; p99: number; max: number };
  /** Entries of /proc/self/fd. */
  fds: number;
  /** TCP connections of the process in state ESTABLISHED (clients in, upstream out). */
  connections: number;
}

const RATE = SMOKE ? 250 : 500;
const TOTAL = SMOKE ? 1_000 : 100_000;
const WARM_UP = SMOKE ? 200 : 20_000;
const SNAPSHOT_SECONDS = SMOKE ? 1 : 20;
const GROWTH_LIMIT = 0.1;
/** Share of requests that must answer 200: the flaky credential's failures are retried on another. */
const MIN_ANSWERED = 0.99;
const FLAKY_SHARE = 0.3;
const STREAM_EVENTS = 5;
const STREAM_MS = 100;

if (!existsSync(fileURLToPath(new URL('../packages/server-http/dist/index.js', import.meta.url)))) {
  console.error('packages/server-http/dist is missing: run `pnpm build` first');
  process.exit(1);
}

// The upstream: answers in OpenAI's shapes; the flaky key fails FLAKY_SHARE of its calls.
const calls = new Map<string, number>();
let flakyFailures = 0;
const completion = JSON.stringify({
  id: 'chatcmpl-soak',
  object: 'chat.completion',
  created: 0,
  model: 'soak-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'The quick brown fox.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
});
const event = (content: string) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-soak', object: 'chat.completion.chunk', created: 0, model: 'soak-model', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const upstream = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (req.method !== 'POST') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
    const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    calls.set(key, (calls.get(key) ?? 0) + 1);
    if (key === 'key-flaky' && Math.random() < FLAKY_SHARE) {
      if (flakyFailures++ % 2 === 0) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end('{"error":{"message":"rate limited","type":"rate_limit_error"}}');
      } else {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"upstream fault","type":"server_error"}}');
      }
      return;
    }
    if (!body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
      return void res.end(completion);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(event(`part ${++sent} `));
      if (sent === STREAM_EVENTS) {
        clearInterval(timer);
        res.end('data: [DONE]\n\n');
      }
    }, STREAM_MS / STREAM_EVENTS);
  });
});
upstream.keepAliveTimeout = 120_000;
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));

// The gateway, in its own process: the built packages (neither the source condition nor tsx), --expose-gc,
// stdout (its log) to /dev/null.
const child = fork(
  fileURLToPath(new URL('./soak/gateway.mjs', import.meta.url)),
  [`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`],
  {
    execArgv: ['--expose-gc'],
    env: {
      ...process.env,
      NODE_OPTIONS: (process.env.NODE_OPTIONS ?? '')
        .split(' ')
        .filter((option) => option !== '--conditions=@switchyard/source' && !option.includes('tsx'))
        .join(' '),
    },
    stdio: ['ignore', openSync('/dev/null', 'w'), 'inherit', 'ipc'],
  },
);
const gatewayUrl = await new Promise<string>((resolve, reject) => {
  child.once('message', (m: { type: string; url: string }) =>
    m.type === 'ready' ? resolve(m.url) : reject(new Error(`unexpected ${m.type}`)),
  );
  child.once('exit', (code) => reject(new Error(`the soak gateway exited with ${code}`)));
});
const stats = () =>
  new Promise<Stats>((resolve) => {
    const onMessage = (m: { type: string; stats: Stats }) => {
      if (m.type !== 'stats') return;
      child.off('message', onMessage);
      resolve(m.stats);
    };
    child.on('message', onMessage);
    child.send({ type: 'stats' });
  });

const client = new Pool(gatewayUrl, { connections: 256, pipelining: 1, keepAliveTimeout: 120_000 });
const outcomes = new Map<string, number>();
const count = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
let done = 0;

async function request(serial: number): Promise<void> {
  const stream = serial % 2 === 1;
  try {
    const response = await client.request({
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-soak' },
      body: JSON.stringify({
        model: 'soak-model',
        ...(stream ? { stream: true } : {}),
        messages: [{ role: 'user', content: `Tell me about foxes, question ${serial}.` }],
      }),
    });
    const text = await response.body.text();
    count(
      response.statusCode === 200 && (!stream || text.includes('[DONE]'))
        ? `${stream ? 'stream' : 'plain'} 200`
        : `status ${response.statusCode}`,
    );
  } catch (error) {
    count(`error ${(error as Error).name}`);
  } finally {
    done++;
  }
}

/** Sends requests `from` .. `to - 1` at RATE per second (open loop), snapshotting every SNAPSHOT_SECONDS; resolves when all have answered. */
async function load(from: number, to: number, snapshots: { at: number; stats: Stats }[]): Promise<number> {
  const started = performance.now();
  const interval = 1000 / RATE;
  let nextSnapshot = started + SNAPSHOT_SECONDS * 1000;
  for (let i = from; i < to; i++) {
    const wait = started + (i - from) * interval - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
    void request(i);
    if (performance.now() >= nextSnapshot) {
      nextSnapshot += SNAPSHOT_SECONDS * 1000;
      snapshots.push({ at: i, stats: await stats() });
    }
  }
  while (done < to) await new Promise((r) => setTimeout(r, 5));
  return (performance.now() - started) / 1000;
}

const mb = (bytes: number) => bytes / 1024 / 1024;
try {
  const idle = await stats();
  const snapshots: { at: number; stats: Stats }[] = [];
  const warmUpSeconds = await load(0, WARM_UP, snapshots);
  const afterWarmUp = await stats();
  const measured: { at: number; stats: Stats }[] = [{ at: WARM_UP, stats: afterWarmUp }];
  const measuredSeconds = await load(WARM_UP, TOTAL, measured);
  // The last interval's event-loop delay is under load; the end reading follows it.
  const end = await stats();
  measured.push({ at: TOTAL, stats: end });
  const growth = end.rss / afterWarmUp.rss - 1;
  const answered = (outcomes.get('plain 200') ?? 0) + (outcomes.get('stream 200') ?? 0);
  const firstLoaded = measured[1]?.stats ?? end;
  const eld = (s: Stats) => `ms (p99 ${s.eld.p99.toFixed(2)}, max ${s.eld.max.toFixed(2)})`;
  const rows: Row[] = [
    {
      name: `requests sent (${WARM_UP.toLocaleString('en-US')} warm-up at ${RATE}/s)`,
      value: TOTAL,
      unit: `in ${(warmUpSeconds + measuredSeconds).toFixed(1)} s`,
    },
    ...[...outcomes.entries()].sort().map(([outcome, n]) => ({ name: `client saw: ${outcome}`, value: n, unit: '' })),
    ...[...calls.entries()].sort().map(([key, n]) => ({ name: `upstream calls with ${key}`, value: n, unit: '' })),
    { name: 'flaky credential: failures served (429 / 500 in turn)', value: flakyFailures, unit: '' },
    { name: 'RSS after gc: idle, before any request', value: mb(idle.rss), unit: 'MB' },
    { name: 'RSS after gc: after the warm-up (start)', value: mb(afterWarmUp.rss), unit: 'MB' },
    {
      name: 'RSS after gc: end',
      value: mb(end.rss),
      unit: 'MB',
      baseline: mb(afterWarmUp.rss),
      target: SMOKE ? `≤ +${GROWTH_LIMIT * 100}% (not enforced in smoke)` : `≤ +${GROWTH_LIMIT * 100}%`,
      pass: growth <= GROWTH_LIMIT,
    },
    { name: 'RSS growth after the warm-up', value: growth * 100, unit: '%' },
    { name: 'heap used after gc: start / end', value: mb(afterWarmUp.heapUsed), unit: `MB / ${mb(end.heapUsed).toFixed(2)} MB` },
    { name: `event-loop delay p50, first ${SNAPSHOT_SECONDS} s after the warm-up`, value: firstLoaded.eld.p50, unit: eld(firstLoaded) },
    { name: `event-loop delay p50, last ${SNAPSHOT_SECONDS} s`, value: end.eld.p50, unit: eld(end) },
    { name: 'file descriptors: idle / start / end', value: idle.fds, unit: `/ ${afterWarmUp.fds} / ${end.fds}` },
    {
      name: 'established TCP connections: idle / start / end',
      value: idle.connections,
      unit: `/ ${afterWarmUp.connections} / ${end.connections}`,
    },
  ];
  const trend = [...snapshots, ...measured].map(
    (s) =>
      `${s.at}: ${mb(s.stats.rss).toFixed(1)} MB, ${s.stats.fds} fds, ${s.stats.connections} conns, ELD p99 ${s.stats.eld.p99.toFixed(1)} ms`,
  );
  console.log(
    `\nsnapshots (requests sent: RSS after gc, fds, connections, event-loop delay p99 over the interval):\n  ${trend.join('\n  ')}`,
  );
  report(`soak: ${TOTAL.toLocaleString('en-US')} requests at ${RATE}/s, half streamed, one flaky credential, shipped config`, rows);
  if (!SMOKE && growth > GROWTH_LIMIT) {
    console.error(`RSS grew ${(growth * 100).toFixed(1)}% after the warm-up (limit ${GROWTH_LIMIT * 100}%)`);
    process.exitCode = 1;
  }
  // A soak whose requests did not go through measures an idle relay: rotation must answer them.
  if (answered < MIN_ANSWERED * TOTAL) {
    console.error(`only ${answered} of ${TOTAL} requests answered 200 (at least ${MIN_ANSWERED * 100}% expected)`);
    if (!SMOKE) process.exitCode = 1;
  }
} finally {
  await client.close();
  child.send({ type: 'close' });
  await new Promise((resolve) => child.once('exit', resolve));
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
}
