/**
 * @module processStart
 * When a process started, so that a lock file naming a PID can tell its own
 * process from a later one given the same number (PIDs are reused after a
 * reboot, and once the counter wraps). On Linux the pair of the boot
 * (`/proc/sys/kernel/random/boot_id`, new at every boot) and the process's
 * start time (field 22 of `/proc/<pid>/stat`, in clock ticks since boot)
 * names one process for good. Elsewhere (no `/proc`: macOS) there is
 * nothing to read, and callers fall back to the PID alone.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** When a process started: the boot it runs in, and its start time within that boot. */
export interface ProcessStart {
  /** `/proc/sys/kernel/random/boot_id`: a UUID drawn at every boot. */
  boot_id: string;
  /** Field 22 (`starttime`) of `/proc/<pid>/stat`: clock ticks from boot to the process's start. */
  start_ticks: number;
}

/** `/proc/<pid>/stat` is one short line; the bound stops a file that is not what it should be. */
const STAT_MAX_CHARS = 4096;

/**
 * When process `pid` started, or undefined when that cannot be read: no
 * `/proc` (macOS), a `/proc` that hides other users' processes, or a
 * process that has exited. `procRoot` is for tests.
 *
 * @example
 * ```ts
 * const mine = await processStart(process.pid); // { boot_id: '4b1c…', start_ticks: 2713395 } on Linux
 * ```
 */
export async function processStart(pid: number, procRoot = '/proc'): Promise<ProcessStart | undefined> {
  const boot_id = await bootId(procRoot);
  if (boot_id === undefined) return undefined;
  let stat: string;
  try {
    stat = await readFile(join(procRoot, String(pid), 'stat'), 'utf8');
  } catch {
    return undefined;
  }
  const start_ticks = startTicksOf(stat);
  return start_ticks === undefined ? undefined : { boot_id, start_ticks };
}

/** The boot id, or undefined without `/proc`. */
export async function bootId(procRoot = '/proc'): Promise<string | undefined> {
  try {
    const id = (await readFile(join(procRoot, 'sys/kernel/random/boot_id'), 'utf8')).trim();
    return id.length > 0 && id.length <= 64 ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Field 22 of a `/proc/<pid>/stat` line. Field 2, the command name, is in
 * parentheses and may itself hold spaces and parentheses, so the fields are
 * counted from the last `)`: the one after it is field 3.
 */
export function startTicksOf(stat: string): number | undefined {
  if (stat.length > STAT_MAX_CHARS) return undefined;
  const commEnd = stat.lastIndexOf(')');
  if (commEnd < 0) return undefined;
  const field = stat
    .slice(commEnd + 1)
    .trim()
    .split(/\s+/)[22 - 3];
  if (field === undefined || !/^\d+$/.test(field)) return undefined;
  const ticks = Number(field);
  return Number.isSafeInteger(ticks) ? ticks : undefined;
}
