/**
 * @module processGroup
 * Stopping everything an agent command started. An agent CLI is often a
 * wrapper (a shell script running node, a launcher running the real
 * binary): signalling only the direct child leaves its children running.
 * The adapter starts the agent as the leader of a process group of its own
 * (`detached`), and this module signals the whole group: TERM, then KILL
 * for whatever is still there after the grace period.
 *
 * An agent's group outlives a `yard` that is killed outright (SIGKILL, the
 * OOM killer): nothing of this process runs to stop it. So a job records its
 * agent's group ({@link describeProcessGroup}), and the process that later
 * finds the job interrupted stops what is left of that very group
 * ({@link stopRecordedProcessGroup}), and never a later group that was given
 * the same number.
 */

import { hostname } from 'node:os';
import { currentProcessIdentity, type ProcessIdentity, processIdentity } from '@switchyard/audit-chain';

/** How often the group is looked at while waiting for it to end. */
const POLL_MS = 25;
/** After KILL only zombies can remain, which cannot be waited for from here: give up after this long. */
const AFTER_KILL_MS = 2000;

/** The agents' groups not yet stopped, killed if this process exits first. */
const live = new Set<number>();

/** Sends `signal` to every process of the group led by `pgid`; false when the group is gone. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    // EPERM: a member we may not signal (it changed its user) still counts as there.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether any process of the group led by `pgid` is still there. */
export function processGroupAlive(pgid: number): boolean {
  return signalGroup(pgid, 0);
}

async function groupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (processGroupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
}

/**
 * Stops the process group led by `pgid`: TERM to every member, KILL to those left after
 * `graceMs`, and resolves once the group is gone (or, after the KILL, once only processes
 * that cannot be waited for remain). A group already gone resolves at once.
 *
 * @example
 * ```ts
 * const child = spawn(command, args, { detached: true });
 * await stopProcessGroup(child.pid!, 5000);
 * ```
 */
export async function stopProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  if (await groupGone(pgid, graceMs)) return;
  if (!signalGroup(pgid, 'SIGKILL')) return;
  await groupGone(pgid, AFTER_KILL_MS);
}

function killLiveGroups(): void {
  for (const pgid of live) signalGroup(pgid, 'SIGKILL');
}

/**
 * Records `pgid` as a running agent's group until the returned function is called. An agent in a
 * group of its own no longer dies with its parent's process group, so this process's exit (an
 * uncaught error, `process.exit`) kills every group still recorded; the 'exit' event is synchronous,
 * hence KILL at once. (A signal's default action skips 'exit': the CLI turns SIGINT and SIGTERM into
 * cancellation, which stops the groups with their grace.)
 */
export function trackProcessGroup(pgid: number): () => void {
  if (live.size === 0) process.on('exit', killLiveGroups);
  live.add(pgid);
  return () => {
    if (live.delete(pgid) && live.size === 0) process.off('exit', killLiveGroups);
  };
}

/**
 * An agent's process group as its job records it: the identity of its leader (`pid` is the group id), enough to
 * find that very group again from another process.
 */
export type RecordedProcessGroup = ProcessIdentity;

/** The record of the group `pgid` leads, or undefined when its leader is already gone. */
export function describeProcessGroup(pgid: number): Promise<RecordedProcessGroup | undefined> {
  return processIdentity(pgid);
}

/**
 * Whether the group a job recorded still runs here, as that group. A group keeps its id while any member runs
 * (Linux gives no new process the id of a live group), so a group whose leader has gone but whose members remain
 * is the recorded one. A leader that runs must be the recorded process: the same boot and start time. What this
 * process cannot judge (another host, another PID namespace, no `/proc`) counts as not the recorded group.
 */
export async function isRecordedGroupRunning(recorded: RecordedProcessGroup): Promise<boolean> {
  if (recorded.host !== hostname() || !processGroupAlive(recorded.pid)) return false;
  const here = await currentProcessIdentity();
  if (recorded.boot_id === undefined || recorded.boot_id !== here.boot_id) return false;
  if (recorded.pid_ns !== undefined && recorded.pid_ns !== here.pid_ns) return false;
  const leader = await processIdentity(recorded.pid);
  if (leader === undefined) return true;
  return recorded.start_ticks !== undefined && leader.start_ticks === recorded.start_ticks;
}

/**
 * Stops what is left of a recorded group (TERM, KILL after `graceMs`) if it still runs as that group; resolves
 * whether it did.
 *
 * @example
 * ```ts
 * if (job.agent_process && (await stopRecordedProcessGroup(job.agent_process, 2000))) console.log('stopped');
 * ```
 */
export async function stopRecordedProcessGroup(recorded: RecordedProcessGroup, graceMs: number): Promise<boolean> {
  if (!(await isRecordedGroupRunning(recorded))) return false;
  await stopProcessGroup(recorded.pid, graceMs);
  return true;
}
