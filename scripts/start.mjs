#!/usr/bin/env node
// `pnpm start`: the main job. Until the gateway server lands, this runs the
// audit-chain demo (write a log, sign a checkpoint, catch three tamperings).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const demo = fileURLToPath(new URL('../examples/audit-chain-quickstart/demo.ts', import.meta.url));
const run = spawnSync(process.execPath, ['--conditions=@switchyard/source', '--import=tsx', demo, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
process.exit(run.status ?? 1);
