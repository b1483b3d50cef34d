// Preloaded into every process of a test run when TEST_DURATIONS names a file
// (see scripts/test.mjs): a test file's process appends its wall time and
// path there as it exits. node:test (Node 20) reports no per-file duration of
// its own, and each file runs in its own process, so this is that time.
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const file = process.argv[1] ?? '';
const destination = process.env.TEST_DURATIONS;
if (destination && file.endsWith('.test.ts')) {
  process.on('exit', (code) => {
    appendFileSync(destination, `${(performance.now() / 1000).toFixed(2)}\t${code}\t${file}\n`);
  });
}
