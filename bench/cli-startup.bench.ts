/**
 * Start-up time of the `yard` command: `yard --help` from the built bin
 * (dist/bin.js, as users run it) against `node -e 0` measured in the same
 * run, as cold processes. Target: `yard --help` within 150 ms, which the
 * bin reaches by loading only commander for help and importing each
 * command's module when it runs.
 *
 *   pnpm --filter @switchyard/cli build   (and its workspace dependencies: pnpm build)
 *   pnpm bench cli-startup [--smoke]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Row, report, SMOKE } from './lib.js';

const bin = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));
if (!existsSync(bin)) {
  console.log('building @switchyard/cli (dist/bin.js is missing)…');
  execFileSync('pnpm', ['--filter', '@switchyard/cli', 'build'], { stdio: 'inherit' });
}
// Cold processes without the source loader: what a user's shell runs.
const env = { ...process.env, NODE_OPTIONS: '' };
const RUNS = SMOKE ? 5 : 30;

function median(args: string[]): number {
  const times: number[] = [];
  spawnSync(process.execPath, args, { env }); // warm the file cache once
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    const run = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

// Interleave so both see the same machine load.
const node: number[] = [];
const help: number[] = [];
for (let round = 0; round < 3; round++) {
  node.push(median(['-e', '0']));
  help.push(median([bin, '--help']));
}
const baseline = Math.min(...node);
const yardHelp = Math.min(...help);
const rows: Row[] = [
  { name: 'node -e 0 (baseline)', value: baseline, unit: 'ms' },
  { name: 'yard --help', value: yardHelp, unit: 'ms', baseline, target: '≤ 150 ms', pass: yardHelp <= 150 },
  { name: 'yard --help, added to node start-up', value: yardHelp - baseline, unit: 'ms' },
];
report('yard start-up (median of cold processes, best of 3 rounds)', rows);
