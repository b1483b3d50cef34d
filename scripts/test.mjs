#!/usr/bin/env node
// Runs every test with node:test through tsx, straight from the TypeScript
// sources (the "@switchyard/source" export condition), no build step. The
// programs tests start as processes run from dist/ when the build is fresh.
//
//   pnpm test                  all tests
//   pnpm test audit-chain      only test files whose path contains "audit-chain"
//   TEST_DURATIONS=/tmp/d.txt pnpm test    also writes each file's wall time there, slowest first
//
// Node 20's --test does not expand globs, so the files are collected here.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SKIP = new Set(['node_modules', 'dist', '.git', 'docs']);

function collect(dir, out) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

// The files that take longest (measured with TEST_DURATIONS, longest first) start first: a few
// files run at a time, and a long one started near the end would run on alone after the rest.
// Only the order depends on this list; a file missing from it runs in path order after these.
const LONGEST_FIRST = [
  'packages/server-http/src/gateway/fuzz.test.ts',
  'packages/cli/test/walkthrough.e2e.test.ts',
  'packages/server-http/test/claudeCodeCli.test.ts',
  'packages/cli/test/subcommands.e2e.test.ts',
  'packages/workflow/src/sync/github/githubCodeHost.test.ts',
  'packages/server-http/test/codexCli.test.ts',
  'packages/workflow/src/sync/github/githubCiPush.test.ts',
  'packages/credentials/test/crash.test.ts',
  'tests/packaging.test.ts',
  'packages/workflow/src/subcommands/subcommands.test.ts',
  'packages/cli/test/specConformance.test.ts',
  'examples/workflow-surfaces/examples.test.ts',
  'examples/gateway/gateway.test.ts',
  'packages/cli/test/agentServe.test.ts',
  'packages/server-http/src/gateway/rekeyCommand.test.ts',
  'packages/credentials/test/watcher.test.ts',
  'packages/server-http/test/nodeFailover.test.ts',
  'packages/audit-chain/test/crash.test.ts',
];
const longRank = (file) => {
  const rank = LONGEST_FIRST.indexOf(file.split(sep).join('/'));
  return rank === -1 ? LONGEST_FIRST.length : rank;
};

const filters = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const passThrough = process.argv.slice(2).filter((arg) => arg.startsWith('-'));
const files = ['packages', 'tests', 'examples']
  .flatMap((dir) => collect(join(root, dir), []))
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort()
  .sort((a, b) => longRank(a) - longRank(b));

if (files.length === 0) {
  console.error(`no test files match ${filters.join(', ')}`);
  process.exit(1);
}

// Test files run from source. tsx by absolute URL: children that run in another directory
// (a temp repo, say) still find it.
const tsx = import.meta.resolve('tsx');
// TEST_DURATIONS=<file>: each test file's process writes its wall time there (summarised, slowest first, at the end).
const durations = process.env.TEST_DURATIONS;
const timer = durations ? `--import=${new URL('./fileTimer.mjs', import.meta.url).href}` : '';
const nodeOptions = [process.env.NODE_OPTIONS ?? '', '--conditions=@switchyard/source', `--import=${tsx}`, timer].join(' ').trim();

// The programs tests start as processes (yard, switchyard) run from the build when it is newer
// than every source it is built from (as in CI, which builds first), else from source: decided
// once here, by test-support's workspaceProgram, and passed down.
const { tsImport } = await import('tsx/esm/api');
const { childrenRunBuilt } = await tsImport('../packages/test-support/src/workspaceProgram.ts', import.meta.url);
const childrenForm = childrenRunBuilt() ? 'built' : 'source';
console.log(
  childrenForm === 'built'
    ? 'programs started by tests run from dist/ (the build is newer than the sources)'
    : 'programs started by tests run from source (`pnpm build` first to start them faster)',
);
const child = spawn(
  process.execPath,
  ['--test', '--test-reporter=spec', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 3}`, ...passThrough, ...files],
  { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_OPTIONS: nodeOptions, SWITCHYARD_TEST_CHILDREN: childrenForm } },
);
const started = performance.now();
child.on('exit', (code, signal) => {
  if (durations) summariseDurations(durations, (performance.now() - started) / 1000);
  process.exit(code ?? (signal ? 1 : 0));
});

/** Rewrites the per-file lines slowest first (wall time, CPU time, file), under a line with the run's totals. */
function summariseDurations(path, wallSeconds) {
  const rows = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split('\t'))
    .map(([seconds, code, file, cpu]) => ({ seconds: Number(seconds), code, file: relative(root, file), cpu: Number(cpu || 0) }))
    .sort((a, b) => b.seconds - a.seconds);
  const sum = (key) => rows.reduce((total, row) => total + row[key], 0).toFixed(1);
  const lines = rows.map(
    (row) =>
      `${row.seconds.toFixed(2).padStart(8)}  ${row.cpu.toFixed(2).padStart(8)}  ${row.code === '0' ? '' : `exit ${row.code}  `}${row.file}`,
  );
  const head = `# wall ${wallSeconds.toFixed(1)} s; ${rows.length} files, ${sum('seconds')} s wall and ${sum('cpu')} s CPU summed\n#   wall s     CPU s  file\n`;
  writeFileSync(path, `${head}${lines.join('\n')}\n`);
  console.log(`per-file wall and CPU times, slowest first: ${path}`);
}
