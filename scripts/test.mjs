#!/usr/bin/env node
// Runs every test with node:test through tsx, straight from the TypeScript
// sources (the "@switchyard/source" export condition), no build step. The
// programs tests start as processes run from dist/ when the build is fresh.
//
//   pnpm test                  all tests
//   pnpm test audit-chain      only test files whose path contains "audit-chain"
//
// Node 20's --test does not expand globs, so the files are collected here.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
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

const filters = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const passThrough = process.argv.slice(2).filter((arg) => arg.startsWith('-'));
const files = ['packages', 'tests', 'examples']
  .flatMap((dir) => collect(join(root, dir), []))
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();

if (files.length === 0) {
  console.error(`no test files match ${filters.join(', ')}`);
  process.exit(1);
}

// Test files run from source. tsx by absolute URL: children that run in another directory
// (a temp repo, say) still find it.
const tsx = import.meta.resolve('tsx');
const nodeOptions = [process.env.NODE_OPTIONS ?? '', '--conditions=@switchyard/source', `--import=${tsx}`].join(' ').trim();

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
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
