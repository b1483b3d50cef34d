/**
 * @module jobOwner
 * Who runs an agent job. Jobs live in a store that several processes share
 * (`yard implement` in one shell, `yard serve` in another), so a process
 * that finds a job `Running` must tell one whose process died (recover it)
 * from one another live process is running (leave it alone). Each job
 * records its owner; recovery asks whether that owner is still alive.
 */
import { hostname } from 'node:os';

/** The process a dispatcher runs jobs in, and how it judges other owners. */
export interface JobOwner {
  /** Names this process in the jobs it starts. */
  readonly id: string;
  /** Whether the process named `id` still runs: `undefined` when this process cannot tell (another host). */
  isAlive(id: string): boolean | undefined;
}

/**
 * The owner `<host>:<pid>:<process start, epoch ms>`. Another process on
 * this host is alive while its pid answers signal 0; a job with this
 * process's pid but another start time was left by an earlier process that
 * had the same pid (a restarted container), so it is dead. Jobs of other
 * hosts are never judged here (undefined); `yard jobs cancel` ends those.
 *
 * @example
 * ```ts
 * const dispatcher = new AgentDispatcher({ ...deps, owner: processJobOwner() });
 * await dispatcher.recoverInterrupted(); // fails only jobs whose process is gone
 * ```
 */
export function processJobOwner(
  host: string = hostname(),
  pid: number = process.pid,
  startedAt: number = Math.round(performance.timeOrigin),
): JobOwner {
  return {
    id: `${host}:${pid}:${startedAt}`,
    isAlive(id) {
      const match = /^(.*):(\d+):(\d+)$/.exec(id);
      if (!match || match[1] !== host) return undefined;
      const owner = Number(match[2]);
      if (owner === pid) return Number(match[3]) === startedAt;
      try {
        process.kill(owner, 0);
        return true;
      } catch (error) {
        // EPERM: the process exists but belongs to someone else.
        return (error as NodeJS.ErrnoException).code === 'EPERM';
      }
    },
  };
}
