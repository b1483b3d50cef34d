/**
 * Runs TypeScript scripts and the CLI in child processes, from source.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const SOURCE_FLAGS = ['--conditions=@switchyard/source', '--import=tsx'];
export const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));

/** Starts `node <script> ...args` with the source flags. */
export function spawnTs(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, [...SOURCE_FLAGS, script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Runs the audit-chain CLI to completion. */
export function runCli(args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnTs(BIN, args);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin!.end(stdin);
  });
}
