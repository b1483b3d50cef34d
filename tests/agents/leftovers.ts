/**
 * @module leftovers
 * What a real coding-agent CLI leaves running after a test, killed: its
 * process group, and anything it started from its temporary home and
 * detached from that group. Shared by the PTY harness and the headless
 * `yard implement` test.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * SIGKILLs every process whose program lies under `dir`: what an agent started from its own
 * temporary home and detached from its group (Codex 0.171 leaves an app-server daemon running
 * from ~/.codex after it exits). Read from /proc, so Linux only; elsewhere nothing is found.
 */
export function killProgramsUnder(dir: string): void {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return;
  }
  for (const pid of pids) {
    let program: string;
    try {
      program = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    } catch {
      continue; // gone, or not ours to read
    }
    if (!program.startsWith(`${dir}/`)) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // it ended meanwhile
    }
  }
}

/** SIGKILLs what is left of the agent's process group (helpers it started), if anything. */
export function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
