/**
 * Counts the instructions a proxy executes per request, under valgrind's callgrind, in one run.
 *
 *   pnpm build && pnpm bench instructions [--warm N] [--requests N] [--cache] [mode ...]
 *
 * `mode` is one of `proxy.ts`'s modes (`bare`, `gateway` for the tuned relay, `defaults` for the whole gateway
 * with the shipped config); without modes, all three. Each proxy runs under callgrind with instrumentation off,
 * takes `--warm` requests (default 10,000, eight at a time, a fresh body each), is then instrumented for
 * `--requests` more (default 2,000), and its counts are dumped. `--cache` adds callgrind's cache simulation
 * (first-level instruction and data misses, last-level misses).
 *
 * Why: CPU time per request varies by ±10% between processes of one build on this VM (`pnpm bench compare`);
 * instruction counts do not depend on the machine's other load. What they miss, and what they over-count:
 *
 * - the kernel: socket writes and wake-ups are not counted (they are a third of a proxy's CPU time here);
 * - the cost of an instruction: cache misses are counted with `--cache`, not weighed;
 * - time: under valgrind a request takes about fifty times longer, so work that runs on timers, and the
 *   optimizing compiler's background work while code tiers up, weigh fifty times more per request than they
 *   do natively. The compiler's share (`v8::internal::compiler::*`) is reported apart; timer work is not.
 *
 * So read the counts as "work of the request path", compare modes within one run, and confirm a change with
 * `pnpm bench compare` before believing it.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { chatOnce, startReady } from './processes.js';

const MODES = ['bare', 'gateway', 'defaults'] as const;
type Mode = (typeof MODES)[number];

const { values, positionals } = parseArgs({
  options: {
    warm: { type: 'string', default: '10000' },
    requests: { type: 'string', default: '2000' },
    cache: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const WARM = Number(values.warm);
const REQUESTS = Number(values.requests);
if (!(WARM >= 0 && REQUESTS > 0)) {
  console.error('--warm and --requests take counts of requests');
  process.exit(2);
}
const modes = (positionals.length > 0 ? positionals : [...MODES]) as Mode[];
for (const mode of modes) {
  if (!MODES.includes(mode)) {
    console.error(`a mode is one of ${MODES.join(', ')}; got ${JSON.stringify(mode)}`);
    process.exit(2);
  }
}
try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  console.error('valgrind is not installed (Debian: apt-get install valgrind)');
  process.exit(2);
}

/** The proxies resolve `@switchyard/*` to `dist/`, as users run them. */
const env = { ...process.env, NODE_OPTIONS: (process.env.NODE_OPTIONS ?? '').replace('--conditions=@switchyard/source', '') };
const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
const outDir = mkdtempSync(join(tmpdir(), 'relay-instructions-'));
const upstream = await startReady(process.execPath, [fileURLToPath(new URL('./upstream.ts', import.meta.url))], { env, children });
const upstreamUrl = `http://127.0.0.1:${upstream.port}/v1`;

async function load(pool: Pool, total: number): Promise<void> {
  let left = total;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (left-- > 0) await chatOnce(pool);
    }),
  );
}

/** Instructions (and misses, with --cache) per request, in all, and in the optimizing compiler. */
function countsOf(file: string): { events: string[]; totals: number[]; compiler: number } {
  const text = readFileSync(file, 'utf8');
  const events = /^events: (.*)$/m.exec(text)![1]!.split(' ');
  const totals = /^totals: (.*)$/m.exec(text)![1]!.split(' ').map(Number);
  const annotated = execFileSync('callgrind_annotate', ['--threshold=100', file], { encoding: 'utf8', maxBuffer: 256 << 20 });
  let compiler = 0;
  for (const line of annotated.split('\n')) {
    if (line.includes('v8::internal::compiler::')) compiler += Number(line.trim().split(/\s+/)[0]!.replaceAll(',', ''));
  }
  return { events, totals, compiler };
}

const rows: { mode: Mode; perRequest: Record<string, number>; compiler: number }[] = [];
for (const mode of modes) {
  const out = join(outDir, mode);
  const callgrind = [
    '--tool=callgrind',
    '--instr-atstart=no',
    '--smc-check=all-non-file',
    `--callgrind-out-file=${out}`,
    `--log-file=${out}.log`,
  ];
  if (values.cache) callgrind.push('--cache-sim=yes');
  const script = fileURLToPath(new URL('./proxy.ts', import.meta.url));
  console.error(`${mode}: starting under callgrind (slow)`);
  const proxy = await startReady('valgrind', [...callgrind, process.execPath, script, mode, upstreamUrl], {
    env,
    readyOnFd3: mode === 'defaults',
    children,
  });
  const pool = new Pool(`http://127.0.0.1:${proxy.port}`, { connections: 8 });
  await load(pool, WARM);
  execFileSync('callgrind_control', ['--instr=on', String(proxy.pid)], { stdio: 'ignore' });
  await load(pool, REQUESTS);
  execFileSync('callgrind_control', ['--instr=off', String(proxy.pid)], { stdio: 'ignore' });
  execFileSync('callgrind_control', ['--dump', String(proxy.pid)], { stdio: 'ignore' });
  await pool.close();
  proxy.child.kill('SIGKILL');
  const dump = readdirSync(outDir).find((name) => name.startsWith(`${mode}.`) && !name.endsWith('.log'));
  if (!dump) throw new Error(`callgrind wrote no dump for ${mode}`);
  const { events, totals, compiler } = countsOf(join(outDir, dump));
  rows.push({
    mode,
    perRequest: Object.fromEntries(events.map((event, i) => [event, totals[i]! / REQUESTS])),
    compiler: compiler / REQUESTS,
  });
}

const base = rows[0]!;
const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
console.log(`\nInstructions per request under callgrind (${REQUESTS} requests after ${WARM}); ratio against ${base.mode}`);
const missColumns = values.cache ? [' I1 misses | D1 misses | LL misses |', '---:|---:|---:|'] : ['', ''];
console.log(`| mode | instructions | of which the optimizing compiler | the rest | rest, ratio |${missColumns[0]}`);
console.log(`|---|---:|---:|---:|---:|${missColumns[1]}`);
const rest = (row: (typeof rows)[number]) => row.perRequest.Ir! - row.compiler;
for (const row of rows) {
  const misses = values.cache
    ? ` ${k(row.perRequest.I1mr!)} | ${k(row.perRequest.D1mr! + row.perRequest.D1mw!)} | ${(row.perRequest.ILmr! + row.perRequest.DLmr! + row.perRequest.DLmw!).toFixed(0)} |`
    : '';
  console.log(
    `| ${row.mode} | ${k(row.perRequest.Ir!)} | ${k(row.compiler)} | ${k(rest(row))} | ${(rest(row) / rest(base)).toFixed(2)} |${misses}`,
  );
}
process.exit(0);
