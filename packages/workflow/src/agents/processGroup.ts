/**
 * @module processGroup
 * Stopping everything an agent command started. An agent CLI is often a
 * wrapper (a shell script running node, a launcher running the real
 * binary): signalling only the direct child leaves its children running.
 * The adapter starts the agent as the leader of a process group of its own
 * (`detached`), and this module signals the whole group: TERM, then KILL
 * for whatever is still there after the grace period.
 */

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
