// Preloaded into every process of a test run when TEST_DURATIONS names a file
// (see scripts/test.mjs): a test file's process appends its wall time, exit
// code, path and CPU time there as it exits. node:test (Node 20) reports no
// per-file duration of its own, and each file runs in its own process.
//
// The CPU time (from /proc/self/stat on Linux: the process's own and that of
// the child processes it waited for) is what a file costs on a machine shared
// with other work, where wall times mostly measure the neighbours.
import { appendFileSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const file = process.argv[1] ?? '';
const destination = process.env.TEST_DURATIONS;
if (destination && file.endsWith('.test.ts')) {
  process.on('exit', (code) => {
    appendFileSync(destination, `${(performance.now() / 1000).toFixed(2)}\t${code}\t${file}\t${cpuSeconds()}\n`);
  });
}

/** utime + stime + cutime + cstime, in seconds (clock ticks of 1/100 s); empty where /proc is missing. */
function cpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces), which ends at the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields.slice(11, 15).reduce((sum, value) => sum + Number(value), 0);
    return (ticks / 100).toFixed(2);
  } catch {
    return '';
  }
}
