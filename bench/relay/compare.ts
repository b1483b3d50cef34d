/**
 * Compares proxies by CPU time per request, over several fresh processes of each, in one run.
 *
 *   pnpm build && pnpm bench compare [options] [variant ...]
 *
 * A variant is `<name>=<mode>` or `<name>=<mode>@<checkout>`: `mode` is one of `proxy.ts`'s modes (`bare`,
 * `gateway` for the tuned relay, `defaults` for the whole gateway with the shipped config), and `checkout` is
 * another built copy of this repository whose `bench/relay/proxy.ts` (and packages) to run, such as a
 * `git worktree` of an older commit. Without variants: `bare=bare tuned=gateway defaults=defaults`.
 *
 *   --instances N   fresh processes per variant (default 5)
 *   --warm S        seconds of load on each process before anything is counted (default 12)
 *   --slice S       seconds per measured slice (default 3)
 *   --rounds N      slices per process (default 4)
 *   --smoke         one instance, short phases: checks that the tool runs
 *
 * Why this exists: instances of one build differ by up to ±10% in CPU per request (memory layout, JIT
 * decisions; measured 2026-11-28), so two builds compared on one process each, or in two runs, show noise
 * as a difference. Here every process gets the same closed loop (32 connections, a fresh body per
 * request) in rotating slices, so a busy moment on the machine falls on all of them, and each variant is
 * reported as the median of its instances next to their spread. CPU time is read from /proc (Linux only).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { median, processCpuMs } from '../lib.js';
import { chatOnce, startReady } from './processes.js';

const MODES = ['bare', 'gateway', 'defaults'] as const;
type Mode = (typeof MODES)[number];
const CONNECTIONS = 32;

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    instances: { type: 'string', default: '5' },
    warm: { type: 'string', default: '12' },
    slice: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '4' },
    smoke: { type: 'boolean', default: false },
  },
});

function positive(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`--${name} must be a positive number, not ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}
const smoke = options.smoke || process.env.BENCH_SMOKE === '1';
const INSTANCES = smoke ? 1 : Math.round(positive('instances', options.instances));
const WARM_SECONDS = smoke ? 0.5 : positive('warm', options.warm);
const SLICE_SECONDS = smoke ? 0.5 : positive('slice', options.slice);
const ROUNDS = smoke ? 1 : Math.round(positive('rounds', options.rounds));

interface Variant {
  name: string;
  mode: Mode;
  /** The proxy script to run: this checkout's, or another's. */
  script: string;
}

const here = fileURLToPath(new URL('../..', import.meta.url));
function parseVariant(text: string): Variant {
  const match = /^([\w.-]+)=(\w+)(?:@(.+))?$/.exec(text);
  if (!match || !MODES.includes(match[2] as Mode)) {
    console.error(`a variant is <name>=<mode>[@<checkout>] with mode ${MODES.join(', ')}; got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  const checkout = resolve(match[3] ?? here);
  const script = resolve(checkout, 'bench/relay/proxy.ts');
  if (!existsSync(script)) {
    console.error(`${script} does not exist: is ${checkout} a checkout of this repository?`);
    process.exit(2);
  }
  if (!existsSync(resolve(checkout, 'packages/server-http/dist/index.js'))) {
    console.error(`${checkout} is not built: run \`pnpm install --frozen-lockfile && pnpm build\` there first`);
    process.exit(2);
  }
  return { name: match[1]!, mode: match[2] as Mode, script };
}
const variants = (positionals.length > 0 ? positionals : ['bare=bare', 'tuned=gateway', 'defaults=defaults']).map(parseVariant);
if (new Set(variants.map((v) => v.name)).size !== variants.length) {
  console.error('variant names must differ');
  process.exit(2);
}

/** The proxies resolve `@switchyard/*` to `dist/`, as users run them: without the source condition. */
const proxyEnv = { ...process.env, NODE_OPTIONS: (process.env.NODE_OPTIONS ?? '').replace('--conditions=@switchyard/source', '') };
const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) child.kill();
});

/** Starts a script and resolves with the port it prints (on fd 3 for the `defaults` mode, whose stdout is its log). */
const start = (script: string, args: string[], readyOnFd3: boolean) =>
  startReady(process.execPath, [script, ...args], { env: proxyEnv, readyOnFd3, children });

interface Instance {
  variant: Variant;
  pid: number;
  pool: Pool;
  requests: number;
  cpuMs: number;
  ms: number;
}

const upstream = await start(fileURLToPath(new URL('./upstream.ts', import.meta.url)), [], false);
const upstreamUrl = `http://127.0.0.1:${upstream.port}/v1`;
const instances: Instance[] = [];
// Started round-robin, so no variant's processes are all the oldest or all the newest.
for (let i = 0; i < INSTANCES; i++) {
  for (const variant of variants) {
    const proxy = await start(variant.script, [variant.mode, upstreamUrl], variant.mode === 'defaults');
    instances.push({
      variant,
      pid: proxy.pid,
      pool: new Pool(`http://127.0.0.1:${proxy.port}`, { connections: CONNECTIONS, pipelining: 1 }),
      requests: 0,
      cpuMs: 0,
      ms: 0,
    });
  }
}
console.error(
  `${instances.length} proxies (${INSTANCES} per variant); warming each for ${WARM_SECONDS} s, then ${ROUNDS} slices of ${SLICE_SECONDS} s each`,
);

/** A closed loop of {@link CONNECTIONS} on one proxy for `seconds`; counted unless warming. */
async function closedLoop(instance: Instance, seconds: number, counted: boolean): Promise<void> {
  const cpuBefore = processCpuMs(instance.pid);
  const started = performance.now();
  const end = started + seconds * 1000;
  let requests = 0;
  const worker = async () => {
    while (performance.now() < end) {
      await chatOnce(instance.pool);
      requests++;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const cpuAfter = processCpuMs(instance.pid);
  if (!counted) return;
  if (cpuBefore === undefined || cpuAfter === undefined) throw new Error('CPU time needs Linux /proc');
  instance.requests += requests;
  instance.cpuMs += cpuAfter - cpuBefore;
  instance.ms += performance.now() - started;
}

for (const instance of instances) await closedLoop(instance, WARM_SECONDS, false);
for (let round = 0; round < ROUNDS; round++) {
  for (const instance of instances) await closedLoop(instance, SLICE_SECONDS, true);
  console.error(`round ${round + 1} of ${ROUNDS} done`);
}

const cpuUs = (i: Instance) => (i.cpuMs * 1000) / i.requests;
const rate = (i: Instance) => i.requests / (i.ms / 1000);
const rows = variants.map((variant) => {
  const own = instances.filter((i) => i.variant === variant);
  return { variant, cpu: own.map(cpuUs), rates: own.map(rate) };
});
const first = median(rows[0]!.cpu);
console.log(
  `\nCPU time per request (µs), median of ${INSTANCES} process${INSTANCES === 1 ? '' : 'es'} per variant; ratio against ${rows[0]!.variant.name}`,
);
console.log(`${'variant'.padEnd(14)} ${'median'.padStart(8)} ${'ratio'.padStart(6)} ${'req/s'.padStart(8)}  instances (µs)`);
for (const row of rows) {
  const cpu = median(row.cpu);
  console.log(
    `${row.variant.name.padEnd(14)} ${cpu.toFixed(1).padStart(8)} ${(cpu / first).toFixed(2).padStart(6)} ${Math.round(median(row.rates)).toString().padStart(8)}  ${row.cpu.map((v) => v.toFixed(1)).join(', ')}`,
  );
}
for (const instance of instances) await instance.pool.close();
process.exit(0);
