/**
 * @module switchyardCommand
 * Runs the real `switchyard` command (built, or from source) to its end, with an
 * argument array and an environment of the test's choosing (nothing is
 * inherited but PATH), for tests of the CLI's output and exit codes.
 */
import { spawn } from 'node:child_process';
import { workspaceProgram } from '@switchyard/test-support';

/** The build when it is fresh, else the source through tsx (test-support's workspaceProgram). */
const SWITCHYARD = workspaceProgram(new URL('../src/bin.ts', import.meta.url));

/** What a finished `switchyard` process printed, and its exit code. */
export interface SwitchyardRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `switchyard ...args` with `env` (and PATH) and resolves once it has exited. */
export function switchyard(args: string[], env: Record<string, string> = {}): Promise<SwitchyardRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SWITCHYARD.args, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
