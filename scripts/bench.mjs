#!/usr/bin/env node
// Runs the benchmarks in bench/ from source.
//   pnpm bench                 every benchmark
//   pnpm bench relay           only bench/*relay*.bench.ts
//   pnpm bench -- --smoke      quick pass, as CI runs it
//   pnpm bench compare [...]   CPU per request of proxies over several processes each (bench/relay/compare.ts)
//   pnpm bench instructions [...]  instructions per request of proxies under callgrind (bench/relay/instructions.ts)
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const benchDir = fileURLToPath(new URL('../bench/', import.meta.url));
const args = process.argv.slice(2);
const tsx = import.meta.resolve('tsx');
if (args[0] === 'compare' || args[0] === 'instructions') {
  // Not *.bench.ts: they run only when asked for, with their own arguments.
  const run = spawnSync(process.execPath, [`${benchDir}relay/${args[0]}.ts`, ...args.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', `--import=${tsx}`].join(' ').trim() },
  });
  process.exit(run.status ?? 1);
}
const filters = args.filter((a) => !a.startsWith('-'));
const flags = args.filter((a) => a.startsWith('-'));
const files = readdirSync(benchDir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
// tsx by absolute URL (above): children that run in another directory (a temp repo, say) still find it.
const nodeOptions = [process.env.NODE_OPTIONS ?? '', '--conditions=@switchyard/source', `--import=${tsx}`].join(' ').trim();
let failed = false;
for (const file of files) {
  const run = spawnSync(process.execPath, [`${benchDir}${file}`, ...flags], {
    stdio: 'inherit',
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
  });
  if (run.status !== 0) {
    console.error(`benchmark ${file} failed (exit ${run.status})`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
