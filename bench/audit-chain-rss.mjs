// Verifies one file and prints the peak RSS. It runs in its own plain-node
// process, on the built package, so neither the benchmark's data nor the
// TypeScript loader counts against the verifier.
import { existsSync, readFileSync } from 'node:fs';

const dist = new URL('../packages/audit-chain/dist/index.js', import.meta.url);
if (!existsSync(dist)) {
  console.error('build the package first: pnpm build');
  process.exit(2);
}
const { verifyFile } = await import(dist.href);
const [file, origin] = process.argv.slice(2);
const result = await verifyFile(file, { origin });
if (!result.valid) throw new Error(`${result.error_code}: ${result.error_message}`);
// VmHWM is this process image's own peak. getrusage's maxRSS is not: Linux
// carries the parent's high-water mark across fork and exec.
const status = readFileSync('/proc/self/status', 'utf8');
const hwmKb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
const maxRssMb = Number.isFinite(hwmKb) ? hwmKb / 1024 : process.resourceUsage().maxRSS / 1024;
console.log(JSON.stringify({ maxRssMb, entries: result.entries_verified }));
