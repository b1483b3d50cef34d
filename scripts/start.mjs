#!/usr/bin/env node
// `pnpm start`: the main job, the gateway with the quick-start config
// (examples/gateway/config.yaml: demo providers, no keys needed), run from
// source. Extra arguments go to `switchyard serve` (e.g. `pnpm start -- --config my.yaml`).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = fileURLToPath(new URL('../packages/server-http/src/bin.ts', import.meta.url));
const args = process.argv.slice(2).filter((a) => a !== '--');
const config = args.includes('--config') || args.includes('-c') ? [] : ['--config', 'examples/gateway/config.yaml'];
const child = spawn(
  process.execPath,
  ['--conditions=@switchyard/source', `--import=${import.meta.resolve('tsx')}`, bin, 'serve', ...config, ...args],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
