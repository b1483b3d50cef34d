/**
 * Client-keys benchmark: the whole gateway holding 10,000 runtime client keys, every one with limits
 * (a model list with a glob, request and token rates per minute, a daily token budget), against the
 * same gateway with static `api-keys` only, in one run. Each gateway is its own process; the load
 * rotates through all of a gateway's keys.
 *
 * Two static baselines, because two things differ between "10,000 client keys" and "ten static keys":
 * - the same clients: 10,000 static `api-keys`, the load rotating through all of them. Only the kind of
 *   key differs, so the ratio is what the client-key checks cost (digest and lookup, model list, two
 *   rates, budget, last-used and budget-file writes). The targets are read here.
 * - few clients: ten static `api-keys`, the baseline of the earlier runs. It also counts what 10,000
 *   distinct clients cost any gateway whatever their kind of key: 10,000 usage rows per flush instead of
 *   ten, and per-client state that no longer stays in the CPU's caches (measured on 2026-11-28, medians of
 *   five runs: 1.10× against it, 1.03× against the same clients; 10,000 static keys 1.05-1.09× of ten).
 *
 * - Interleaved slices: a closed loop of CONCURRENCY requests per slice, rotating between the three
 *   gateways, so all see the machine's same conditions; each run is SLICES slices per gateway.
 * - CPU per request: all the CPU time the gateway process used over the run, its idle slices included
 *   (a batched write that lands while another gateway is measured is still this one's cost), divided
 *   by the requests it served. Read from /proc/<pid>/task/<tid>/schedstat, the nanoseconds each thread
 *   ran (/proc/<pid>/stat counts 10 ms ticks): the figure that holds still on a machine shared with
 *   other work.
 * - Added p50: the median latency of requests sent one at a time (no queue: a loaded machine's queueing
 *   would swamp microseconds), with client keys minus the baseline's, per run, in interleaved slices too.
 * - In process, no HTTP: the key check alone (config keys' `ApiKeySet.identify` against the guard's
 *   identify + admit + settle with every limit on), per request, over all the keys in turn.
 * - Median of RUNS runs. Targets (issue 27), against the same clients: CPU per request ≤ 1.05× the static
 *   keys', added p50 < 20 µs.
 *
 * Each run starts its own set of gateway processes. Process instances differ: on 2026-11-28, four
 * processes of one and the same gateway config, measured in the same interleaved slices, used 312, 314,
 * 336 and 364 µs of CPU per request. Reusing one pair for every run would repeat one draw five times;
 * a set per run makes the median a median over instances too.
 *
 * Before anything counts, each run's gateways are warmed for WARM_UP_MS and until every client key has been used
 * twice: a key's first request creates its budget entry and period, and the steady state is the measure. Then
 * all of them take load in rotating slices for FLUSH_WARM_UP_MS, longer than the gateway's 10 s flush interval,
 * so each has written its used keys once before anything counts. The first such flush changes the shape of
 * every key's record and budget entry once (a last-used time where there was none, a budget line's kept
 * text), and V8 then drops and recompiles the optimized code of the hot path that read the old shapes: a
 * one-time cost of a fresh process that, measured on 2026-11-28, fell inside the measured slices of the
 * client-keys gateway only (its warm-up came last and its first flush with work came after it).
 *
 * The gateways run pinned to CPU 1 and this load generator to CPU 0 when `taskset` exists. They run the
 * built packages (`dist/`), as users do; `--source` runs them from the TypeScript sources through tsx,
 * whose keep-names transform adds a call to every closure created per request.
 *
 * `--cpu-prof` has each gateway write a V8 CPU profile (`node --cpu-prof`) into `$TMPDIR/bench-client-keys-prof-*`
 * on exit, to compare where the two spend their time (open them in Chrome DevTools' Performance panel).
 *
 * `--perf` records each run's measured slices with Linux `perf` (`perf record -F 2999 -g` on the three gateway
 * processes, started with `--perf-basic-prof` so that JIT frames have names) into
 * `$TMPDIR/bench-client-keys-perf-<random>/run-<n>.data`, and prints which pid is which gateway. Unlike a V8 CPU
 * profile it samples only threads that are on a CPU (a V8 profile also samples a thread blocked in `fsync`)
 * and it sees V8's helper threads (concurrent marking, background compilation). Compare processes with
 * `perf script -i <file> --tid <pid>`, scaling each one's sample counts to its CPU per request.
 *
 *   pnpm build && pnpm bench client-keys [--smoke] [--source] [--cpu-prof] [--perf]
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestEndEvent } from '@switchyard/core-routing';
import { ApiKeySet } from '@switchyard/http-kit';
import { ClientKeyGuard, type KeyAdmission, LocalBudgetLedger, MemoryClientKeyStore } from '@switchyard/server-http';
import { Pool } from 'undici';
import { authDirWithKeys } from './clientKeys/keys.js';
import { median, processCpuMs, type Row, report, SMOKE } from './lib.js';

const KEY_COUNT = SMOKE ? 1_000 : 10_000;
const RUNS = SMOKE ? 1 : 5;
// Many short slices: the machine's speed moves within seconds, and each pair of slices sees the same moment.
const SLICES = SMOKE ? 2 : 24;
const SLICE_MS = SMOKE ? 150 : 250;
const WARM_UP_MS = SMOKE ? 300 : 5_000;
/** Load on all the gateways in turn after their own warm-ups: past one flush of used keys (every 10 s by default). */
const FLUSH_WARM_UP_MS = SMOKE ? 0 : 12_000;
const CONCURRENCY = 16;
/** The static keys of a gateway with `count` of them (the gateway's own script makes the same list). */
const staticKeys = (count: number) => Array.from({ length: count }, (_, i) => `sk-static-bench-${i}`);
const FEW_STATIC_KEYS = staticKeys(10);
const SAME_STATIC_KEYS = staticKeys(KEY_COUNT);
const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const FROM_SOURCE = process.argv.includes('--source');
const CPU_PROFILE_DIR = process.argv.includes('--cpu-prof') ? mkdtempSync(join(tmpdir(), 'bench-client-keys-prof-')) : undefined;
const PERF_DIR = process.argv.includes('--perf') ? mkdtempSync(join(tmpdir(), 'bench-client-keys-perf-')) : undefined;
if (!FROM_SOURCE) {
  for (const pkg of ['runtime', 'core-routing', 'translate', 'relay', 'http-kit', 'observability', 'credentials', 'server-http']) {
    if (!existsSync(fileURLToPath(new URL(`../packages/${pkg}/dist/index.js`, import.meta.url)))) {
      console.error(`packages/${pkg}/dist is missing: run \`pnpm build\` first (or pass --source)`);
      process.exit(1);
    }
  }
}
/** The gateways' environment: without the source condition, `@switchyard/*` resolves to `dist/`. */
const childEnv = FROM_SOURCE
  ? process.env
  : { ...process.env, NODE_OPTIONS: (process.env.NODE_OPTIONS ?? '').replace('--conditions=@switchyard/source', '') };
/** CPU time a gateway has used, in ms (it runs where /proc is: the benchmark pins with taskset, Linux). */
const cpuMs = (pid: number) => processCpuMs(pid) ?? Number.NaN;

async function start(authDir: string, staticKeyCount: number, name: string): Promise<{ child: ChildProcess; port: number }> {
  const script = fileURLToPath(new URL('./clientKeys/server.ts', import.meta.url));
  const options = {
    stdio: ['ignore', 'pipe', 'inherit'] as ('ignore' | 'pipe' | 'inherit')[],
    env: childEnv,
    // `--perf-basic-prof` has V8 write a log of code events into the working directory: the recording's, not the repository.
    ...(PERF_DIR ? { cwd: PERF_DIR } : {}),
  };
  // One directory per gateway: each thread (tsx's loader has its own) writes a profile named by pid and thread.
  const profile = [
    ...(CPU_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${join(CPU_PROFILE_DIR, name)}`] : []),
    ...(PERF_DIR ? ['--perf-basic-prof'] : []),
  ];
  const node = [process.execPath, ...profile, script, authDir, String(staticKeyCount)];
  const child = hasTaskset ? spawn('taskset', ['-c', '1', ...node], options) : spawn(node[0]!, node.slice(1), options);
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', (code) => reject(new Error(`the benchmark gateway exited with ${code}`)));
  });
  return { child, port };
}

if (hasTaskset) spawnSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' });
const baselineDir = mkdtempSync(join(tmpdir(), 'bench-static-keys-'));
const { dir: keysDir, secrets, records } = authDirWithKeys(KEY_COUNT);
/** The 10,000 static keys (the same clients), the ten static keys (few clients), the 10,000 client keys. */
const TARGETS = ['sameClients', 'fewClients', 'clientKeys'] as const;
type Target = (typeof TARGETS)[number];
type Gateways = Record<Target, { child: ChildProcess; port: number; keys: string[] }>;
/** The gateways of the run in progress, and the load generator's pools to them. */
let targets!: Gateways;
let pools!: Record<Target, Pool>;
let setRunning = false;

/** Starts a fresh set of gateways (each run measures its own: see the note on process instances above). */
async function startSet(run: number): Promise<void> {
  targets = {
    sameClients: { ...(await start(baselineDir, SAME_STATIC_KEYS.length, `same-clients-${run}`)), keys: SAME_STATIC_KEYS },
    fewClients: { ...(await start(baselineDir, FEW_STATIC_KEYS.length, `few-clients-${run}`)), keys: FEW_STATIC_KEYS },
    clientKeys: { ...(await start(keysDir, FEW_STATIC_KEYS.length, `client-keys-${run}`)), keys: secrets },
  };
  const pool = (target: Target) => new Pool(`http://127.0.0.1:${targets[target].port}`, { connections: CONCURRENCY });
  pools = { sameClients: pool('sameClients'), fewClients: pool('fewClients'), clientKeys: pool('clientKeys') };
  setRunning = true;
}

/** Stops the set (SIGTERM: each writes what it holds and exits, writing its CPU profile if asked). */
async function stopSet(): Promise<void> {
  if (!setRunning) return;
  setRunning = false;
  for (const target of TARGETS) await pools[target].close();
  const exited = Object.values(targets).map(({ child }) =>
    child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : Promise.resolve(),
  );
  for (const { child } of Object.values(targets)) child.kill('SIGTERM');
  await Promise.all(exited);
}
const body = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'hi' }] });
let next = 0;

/** A closed loop of `concurrency` requests against `target` for `ms`; latencies in µs are pushed to `latencies`. */
async function slice(target: Target, ms: number, latencies: number[], concurrency = CONCURRENCY): Promise<number> {
  const { keys } = targets[target];
  const end = performance.now() + ms;
  let served = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const key = keys[next++ % keys.length]!;
      const started = performance.now();
      const response = await pools[target].request({
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
      await response.body.arrayBuffer();
      if (response.statusCode !== 200) throw new Error(`${target}: status ${response.statusCode}`);
      latencies.push((performance.now() - started) * 1000);
      served++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return served;
}

/** The key check alone, in this process: µs per request for the config's keys (ten and 10,000) and for the guard. */
async function keyCheckInProcess(): Promise<{ fewStaticUs: number; sameStaticUs: number; guardUs: number }> {
  const guard = await ClientKeyGuard.open({ store: new MemoryClientKeyStore(), ledger: new LocalBudgetLedger(), clock: Date });
  for (const record of records) guard.apply(record);
  const fewSet = new ApiKeySet(FEW_STATIC_KEYS);
  const sameSet = new ApiKeySet(SAME_STATIC_KEYS);
  const end = { tokens: { input: 12, output: 30 }, provider: 'mock' } as RequestEndEvent;
  const rounds = SMOKE ? 20_000 : 300_000;
  const time = (fn: (i: number) => void) => {
    for (let i = 0; i < 10_000; i++) fn(i);
    const started = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) fn(i);
    return Number(process.hrtime.bigint() - started) / 1000 / rounds;
  };
  const fewStaticUs = time((i) => fewSet.identify(FEW_STATIC_KEYS[i % FEW_STATIC_KEYS.length]));
  const sameStaticUs = time((i) => sameSet.identify(SAME_STATIC_KEYS[i % SAME_STATIC_KEYS.length]));
  const guardUs = time((i) => {
    const key = guard.identify(secrets[i % secrets.length]!)!;
    const admission = guard.admit(key, 'bench-model') as KeyAdmission;
    guard.settle(admission, end);
  });
  return { fewStaticUs, sameStaticUs, guardUs };
}

/** `perf record` on the gateways of the run in progress, into `file`; resolves once it samples. */
async function startPerf(file: string): Promise<{ stop(): Promise<void> }> {
  const pids = TARGETS.map((target) => targets[target].child.pid).join(',');
  const perf = spawn('perf', ['record', '-F', '2999', '-g', '-o', file, '-p', pids], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => perf.once('exit', () => resolve()));
  await new Promise((resolve) => setTimeout(resolve, 500));
  console.log(`perf: ${file}, ${TARGETS.map((target) => `${target} = pid ${targets[target].child.pid}`).join(', ')}`);
  return {
    async stop() {
      perf.kill('SIGINT');
      await exited;
    },
  };
}

const perTarget = () => ({ sameClients: [] as number[], fewClients: [] as number[], clientKeys: [] as number[] });
/** Per run: client keys' CPU per request over each baseline's, and its p50 minus each baseline's. */
const cpuRatios = { sameClients: [] as number[], fewClients: [] as number[] };
const addedP50 = { sameClients: [] as number[], fewClients: [] as number[] };
const perRequest = perTarget();
const p50s = perTarget();
try {
  for (let run = 0; run < RUNS; run++) {
    await startSet(run);
    // Settle the processes (JIT, heap growth) before anything counts; every key is used twice here.
    for (const target of TARGETS) {
      let served = 0;
      const started = performance.now();
      while (performance.now() - started < WARM_UP_MS || served < 2 * targets[target].keys.length) {
        served += await slice(target, SLICE_MS, []);
      }
    }
    const flushWarmUpEnd = performance.now() + FLUSH_WARM_UP_MS;
    while (performance.now() < flushWarmUpEnd) for (const target of TARGETS) await slice(target, SLICE_MS, []);
    const served = { sameClients: 0, fewClients: 0, clientKeys: 0 };
    const latencies = perTarget();
    const cpuAt = () => Object.fromEntries(TARGETS.map((target) => [target, cpuMs(targets[target].child.pid!)])) as Record<Target, number>;
    const recording = PERF_DIR ? await startPerf(join(PERF_DIR, `run-${run + 1}.data`)) : undefined;
    const cpuAtStart = cpuAt();
    for (let i = 0; i < SLICES; i++) {
      // Rotate which goes first, so none always follows another.
      const order = TARGETS.map((_, k) => TARGETS[(i + k) % TARGETS.length]!);
      for (const target of order) served[target] += await slice(target, SLICE_MS, []);
      for (const target of order) served[target] += await slice(target, SLICE_MS / 2, latencies[target], 1);
    }
    // Over the whole run, each gateway's idle slices included: all ran for the same time.
    const cpuAtEnd = cpuAt();
    await recording?.stop();
    await stopSet();
    const cpuUs = Object.fromEntries(
      TARGETS.map((target) => [target, ((cpuAtEnd[target] - cpuAtStart[target]) / served[target]) * 1000]),
    ) as Record<Target, number>;
    const p50 = Object.fromEntries(TARGETS.map((target) => [target, median(latencies[target])])) as Record<Target, number>;
    for (const target of TARGETS) {
      perRequest[target].push(cpuUs[target]);
      p50s[target].push(p50[target]);
    }
    for (const baseline of ['sameClients', 'fewClients'] as const) {
      cpuRatios[baseline].push(cpuUs.clientKeys / cpuUs[baseline]);
      addedP50[baseline].push(p50.clientKeys - p50[baseline]);
    }
    console.log(
      `run ${run + 1}: CPU/request ${KEY_COUNT} static ${cpuUs.sameClients.toFixed(1)} µs, 10 static ${cpuUs.fewClients.toFixed(1)} µs, ` +
        `client keys ${cpuUs.clientKeys.toFixed(1)} µs (${(cpuUs.clientKeys / cpuUs.sameClients).toFixed(3)}× / ${(cpuUs.clientKeys / cpuUs.fewClients).toFixed(3)}×); ` +
        `p50 ${p50.sameClients.toFixed(0)} / ${p50.fewClients.toFixed(0)} / ${p50.clientKeys.toFixed(0)} µs`,
    );
  }
  const inProcess = await keyCheckInProcess();
  const ratio = median(cpuRatios.sameClients);
  const added = median(addedP50.sameClients);
  const keys = KEY_COUNT.toLocaleString('en-US');
  const rows: Row[] = [
    { name: `CPU per request, ${keys} static api-keys (the same clients)`, value: median(perRequest.sameClients), unit: 'µs' },
    {
      name: `CPU per request, ${keys} client keys with limits`,
      value: median(perRequest.clientKeys),
      unit: 'µs',
      baseline: median(perRequest.sameClients),
      target: '≤ 1.05×',
      pass: ratio <= 1.05,
    },
    { name: 'CPU ratio to the same clients (median of per-run ratios)', value: ratio, unit: '×', target: '≤ 1.05', pass: ratio <= 1.05 },
    { name: 'CPU per request, 10 static api-keys (few clients)', value: median(perRequest.fewClients), unit: 'µs' },
    { name: 'CPU ratio to few clients (median of per-run ratios)', value: median(cpuRatios.fewClients), unit: '×' },
    { name: `p50 latency, ${keys} static api-keys`, value: median(p50s.sameClients), unit: 'µs' },
    { name: 'p50 latency, 10 static api-keys', value: median(p50s.fewClients), unit: 'µs' },
    { name: 'p50 latency, client keys', value: median(p50s.clientKeys), unit: 'µs' },
    {
      name: 'added p50 over the same clients (median of per-run differences)',
      value: added,
      unit: 'µs',
      target: '< 20 µs',
      pass: added < 20,
    },
    { name: 'added p50 over few clients (median of per-run differences)', value: median(addedP50.fewClients), unit: 'µs' },
    { name: 'in process: ApiKeySet.identify, 10 static keys', value: inProcess.fewStaticUs, unit: 'µs' },
    { name: `in process: ApiKeySet.identify, ${keys} static keys`, value: inProcess.sameStaticUs, unit: 'µs' },
    {
      name: 'in process: identify + admit + settle, every limit on',
      value: inProcess.guardUs,
      unit: 'µs',
      baseline: inProcess.sameStaticUs,
      target: 'added < 20 µs',
      pass: inProcess.guardUs - inProcess.sameStaticUs < 20,
    },
  ];
  report(`Client keys: ${keys} runtime keys with limits against static api-keys (median of ${RUNS} runs)`, rows);
} finally {
  await stopSet();
  if (CPU_PROFILE_DIR)
    console.log(
      `CPU profiles (the largest file of each is the main thread's): ${CPU_PROFILE_DIR}/{same-clients,few-clients,client-keys}-<run>/`,
    );
  rmSync(baselineDir, { recursive: true, force: true });
  rmSync(keysDir, { recursive: true, force: true });
}
