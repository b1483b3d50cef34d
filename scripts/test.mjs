#!/usr/bin/env node
// Runs every test with node:test through tsx, straight from the TypeScript
// sources (the "@switchyard/source" export condition), no build step.
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

// Children (CLIs spawned by tests) inherit these, so they also run from source.
// tsx by absolute URL: children that run in another directory (a temp repo, say) still find it.
const tsx = import.meta.resolve('tsx');
const nodeOptions = [process.env.NODE_OPTIONS ?? '', '--conditions=@switchyard/source', `--import=${tsx}`].join(' ').trim();
const child = spawn(
  process.execPath,
  ['--test', '--test-reporter=spec', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 3}`, ...passThrough, ...files],
  { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_OPTIONS: nodeOptions } },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
