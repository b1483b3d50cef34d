/**
 * Small helpers shared by the benchmarks: timing, and a uniform report.
 * Benchmarks print ratios against a baseline measured in the same run, so
 * the numbers mean something on any machine.
 */

import { readdirSync, readFileSync } from 'node:fs';

/** True when the benchmark should run a quick smoke pass (CI). */
export const SMOKE = process.argv.includes('--smoke') || process.env.BENCH_SMOKE === '1';

/** Runs `fn` (which processes `units` items per call) until `minMs` elapsed; returns items per second. */
export function throughput(fn: () => number, minMs = SMOKE ? 100 : 1500): number {
  fn(); // warm-up
  let units = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  do {
    units += fn();
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  } while (elapsed < minMs);
  return (units / elapsed) * 1000;
}

/** Async variant of {@link throughput}. */
export async function throughputAsync(fn: () => Promise<number>, minMs = SMOKE ? 100 : 1500): Promise<number> {
  await fn();
  let units = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  do {
    units += await fn();
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  } while (elapsed < minMs);
  return (units / elapsed) * 1000;
}

export interface Row {
  name: string;
  value: number;
  unit: string;
  baseline?: number;
  target?: string;
  pass?: boolean;
}

/** Prints rows as a table and one JSON line (for docs/benchmarks.md). */
export function report(title: string, rows: Row[]): void {
  console.log(`\n## ${title}${SMOKE ? ' (smoke run: small sizes, figures not representative)' : ''}\n`);
  console.log('| measurement | value | vs baseline | target |');
  console.log('|---|---:|---:|---|');
  for (const row of rows) {
    const ratio = row.baseline ? `${(row.value / row.baseline).toFixed(2)}×` : '';
    const target = row.target ? `${row.target} ${row.pass === undefined ? '' : row.pass ? '✓' : '✗'}` : '';
    console.log(`| ${row.name} | ${format(row.value)} ${row.unit} | ${ratio} | ${target} |`);
  }
  console.log(`\nJSON ${JSON.stringify({ title, smoke: SMOKE, node: process.version, rows })}`);
}

function format(value: number): string {
  if (value >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(2);
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * CPU time process `pid` has used, in ms: the sum over its threads of the time each ran, from
 * /proc/<pid>/task/<tid>/schedstat (nanoseconds; /proc/<pid>/stat counts 10 ms ticks). Undefined where
 * /proc is not there.
 */
export function processCpuMs(pid: number): number | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read; its time is not counted, as it is not in the other reads.
    }
  }
  return ns / 1e6;
}
