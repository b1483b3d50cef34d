/**
 * @module fileLock
 * A lock file for writers in several processes: created with O_EXCL,
 * holding its owner's identity (PID, host, boot id, the process's start
 * time and PID namespace) and a random token. A PID alone cannot judge a
 * lock: a writer killed while it was PID 1 in a container leaves a lock the
 * restarted PID 1 would take for its own, and a process in another PID
 * namespace is invisible here, so its live lock would look dead. Staleness
 * is judged as `@switchyard/credentials`' directory claim judges it (this
 * package imports no workspace package, so it keeps its own copy of the
 * idea), and every lock has a maximum age. A stale lock is broken by one
 * breaker at a time (it holds `<lock>.break` while it checks the lock is the
 * one it judged and renames it aside), so two processes breaking the same
 * stale lock cannot both win, and neither can move aside the lock a writer
 * took after the other broke the stale one.
 */
import { randomUUID } from 'node:crypto';
import { type FileHandle, link, open, readFile, readlink, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuditChainError } from '../core/errors.js';

/** Options of {@link acquireFileLock}. */
export interface FileLockOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** A lock whose content cannot be read is stale after this long (default 30 s). */
  staleMs?: number;
  /**
   * A lock older than this is stale whoever holds it (default 10 minutes): locks are held for one
   * batch write, so only a hung or unjudgeable owner (another host, another PID namespace) gets there.
   */
  maxAgeMs?: number;
  /** Where `/proc` is (tests). */
  procRoot?: string;
}

/** Releases a held lock. */
export type ReleaseLock = () => Promise<void>;

/** Who holds a lock (or wrote an intent): enough to tell that process from a later one given the same PID. */
export interface ProcessIdentity {
  pid: number;
  host: string;
  /** `/proc/sys/kernel/random/boot_id`; absent without `/proc`. */
  boot_id?: string;
  /** Field 22 of `/proc/<pid>/stat` (clock ticks from boot); absent without `/proc`. */
  start_ticks?: number;
  /** The PID namespace (`/proc/self/ns/pid` link text): a PID means nothing in another one. */
  pid_ns?: string;
}

const STAT_MAX_CHARS = 4096;

async function bootId(procRoot: string): Promise<string | undefined> {
  try {
    const id = (await readFile(join(procRoot, 'sys/kernel/random/boot_id'), 'utf8')).trim();
    return id.length > 0 && id.length <= 64 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Field 22 of a `/proc/<pid>/stat` line, counted from the last `)` (the command name may hold spaces). */
function startTicksOf(stat: string): number | undefined {
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

async function startTicks(pid: number | 'self', procRoot: string): Promise<number | undefined> {
  try {
    return startTicksOf(await readFile(join(procRoot, String(pid), 'stat'), 'utf8'));
  } catch {
    return undefined;
  }
}

async function pidNamespace(pid: number | 'self', procRoot: string): Promise<string | undefined> {
  try {
    return await readlink(join(procRoot, String(pid), 'ns/pid'));
  } catch {
    return undefined;
  }
}

async function identityOf(pid: number | 'self', procRoot: string): Promise<ProcessIdentity> {
  const [boot, ticks, ns] = await Promise.all([bootId(procRoot), startTicks(pid, procRoot), pidNamespace(pid, procRoot)]);
  return {
    pid: pid === 'self' ? process.pid : pid,
    host: hostname(),
    ...(boot !== undefined ? { boot_id: boot } : {}),
    ...(ticks !== undefined ? { start_ticks: ticks } : {}),
    ...(ns !== undefined ? { pid_ns: ns } : {}),
  };
}

/**
 * This process's identity, as a lock or an intent records it.
 *
 * @example
 * ```ts
 * const me = await currentProcessIdentity(); // { pid: 4711, host: 'ci-1', boot_id: '4b1c…', start_ticks: 2713395, pid_ns: 'pid:[4026531836]' }
 * ```
 */
export function currentProcessIdentity(procRoot = '/proc'): Promise<ProcessIdentity> {
  return identityOf('self', procRoot);
}

/**
 * The identity of another process of this host (a child, say), or undefined when no process has that PID: what
 * to record to find that very process again later, and not a later one given the same PID.
 *
 * @example
 * ```ts
 * const agent = await processIdentity(child.pid!); // { pid: 5120, host: 'ci-1', boot_id: '4b1c…', start_ticks: 2713999, … }
 * ```
 */
export async function processIdentity(pid: number, procRoot = '/proc'): Promise<ProcessIdentity | undefined> {
  if (!Number.isSafeInteger(pid) || pid <= 0 || !processExists(pid)) return undefined;
  return identityOf(pid, procRoot);
}

/** An identity read back from a file, or undefined when it does not read as one. */
export function parseProcessIdentity(value: unknown): ProcessIdentity | undefined {
  const v = (value ?? {}) as Partial<Record<keyof ProcessIdentity, unknown>>;
  if (!Number.isSafeInteger(v.pid) || (v.pid as number) <= 0 || typeof v.host !== 'string') return undefined;
  return {
    pid: v.pid as number,
    host: v.host,
    ...(typeof v.boot_id === 'string' && v.boot_id.length > 0 ? { boot_id: v.boot_id } : {}),
    ...(Number.isSafeInteger(v.start_ticks) && (v.start_ticks as number) >= 0 ? { start_ticks: v.start_ticks as number } : {}),
    ...(typeof v.pid_ns === 'string' && v.pid_ns.length > 0 ? { pid_ns: v.pid_ns } : {}),
  };
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Whether the process `owner` names is certainly gone. Undecidable cases (another host, another PID
 * namespace, no `/proc`) count as alive: breaking a live lock forks the chain, and a lock's maximum
 * age bounds the wait instead.
 *
 * @example
 * ```ts
 * if (await isProcessGone({ pid: 1, host: 'ci-1', boot_id: 'old', start_ticks: 5 })) console.log('stale');
 * ```
 */
export async function isProcessGone(owner: ProcessIdentity, procRoot = '/proc'): Promise<boolean> {
  if (owner.host !== hostname()) return false;
  const boot = await bootId(procRoot);
  // A PID from an earlier boot names nothing now.
  if (owner.boot_id !== undefined && boot !== undefined && owner.boot_id !== boot) return true;
  const ns = await pidNamespace('self', procRoot);
  if (owner.pid_ns !== undefined && ns !== undefined && owner.pid_ns !== ns) return false;
  if (owner.pid === process.pid) {
    // Our own PID: ours (a live lock of this process or one of its threads) unless it started at another time.
    if (owner.start_ticks === undefined) return false;
    const mine = await startTicks('self', procRoot);
    return mine !== undefined && mine !== owner.start_ticks;
  }
  if (!processExists(owner.pid)) return true;
  if (owner.start_ticks === undefined) return false;
  const now = await startTicks(owner.pid, procRoot);
  return now !== undefined && now !== owner.start_ticks;
}

/** This process's identity does not change while it runs: read once per `/proc` root. */
const identities = new Map<string, Promise<ProcessIdentity>>();
function ownIdentity(procRoot: string): Promise<ProcessIdentity> {
  let identity = identities.get(procRoot);
  if (!identity) {
    identity = currentProcessIdentity(procRoot);
    identities.set(procRoot, identity);
  }
  return identity;
}

interface LockContent {
  owner: ProcessIdentity | undefined;
  acquiredAt: number | undefined;
}

function parseLock(content: string): LockContent | undefined {
  if (!content.endsWith('\n')) return undefined;
  const text = content.trim();
  if (text.startsWith('{')) {
    try {
      const value = JSON.parse(text) as { acquired_at?: unknown };
      const owner = parseProcessIdentity(value);
      if (!owner) return undefined;
      return { owner, acquiredAt: typeof value.acquired_at === 'number' ? value.acquired_at : undefined };
    } catch {
      return undefined;
    }
  }
  // The earlier form: `<pid> <token> <ms>`, on this host.
  const [pid, , at] = text.split(' ');
  const n = Number(pid);
  if (!Number.isSafeInteger(n) || n <= 0) return undefined;
  return { owner: { pid: n, host: hostname() }, acquiredAt: Number.isFinite(Number(at)) ? Number(at) : undefined };
}

async function isStale(path: string, content: string, options: Required<Omit<FileLockOptions, 'timeoutMs'>>): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  const age = info === undefined ? 0 : Date.now() - info.mtimeMs;
  const lock = parseLock(content);
  // Unreadable content: the owner died between creating and writing it, or is writing now.
  if (!lock?.owner) return age > options.staleMs;
  if (age > options.maxAgeMs) return true;
  return isProcessGone(lock.owner, options.procRoot);
}

/**
 * Creates `path` holding `content` unless a file is there (`O_EXCL`), and resolves with the function that removes it
 * while it still holds `content` (a breaker may have moved it aside and someone else taken the path since); resolves
 * undefined when the path is taken.
 */
async function createOwnedFile(path: string, content: string): Promise<ReleaseLock | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
  return async () => {
    if ((await readFile(path, 'utf8').catch(() => undefined)) === content) await unlink(path).catch(() => undefined);
  };
}

/** How long a breaker's claim may stand before another breaker takes it for a crashed breaker's: breaking takes milliseconds. */
const BREAK_CLAIM_MAX_AGE_MS = 10_000;

/**
 * Takes `<lock>.break`, the right to move a stale lock aside, or resolves undefined when another breaker holds it.
 * Two breakers that both judged the same dead lock would otherwise both pass the check that it is unchanged, and
 * the second would move aside the lock a writer took after the first had broken the dead one. A claim whose
 * owner is gone, or that is older than {@link BREAK_CLAIM_MAX_AGE_MS}, was left by a crashed breaker and is
 * cleared for the next attempt.
 */
async function claimBreak(path: string, owner: ProcessIdentity, procRoot: string): Promise<ReleaseLock | undefined> {
  const claimPath = `${path}.break`;
  const release = await createOwnedFile(claimPath, `${JSON.stringify({ ...owner, token: randomUUID() })}\n`);
  if (release === undefined) await clearCrashedClaim(claimPath, procRoot);
  return release;
}

async function clearCrashedClaim(claimPath: string, procRoot: string): Promise<void> {
  const content = await readFile(claimPath, 'utf8').catch(() => undefined);
  if (content === undefined) return;
  const info = await stat(claimPath).catch(() => undefined);
  const age = info === undefined ? 0 : Date.now() - info.mtimeMs;
  const claimant = parseLock(content)?.owner;
  const crashed = age > BREAK_CLAIM_MAX_AGE_MS || (claimant !== undefined && (await isProcessGone(claimant, procRoot)));
  if (!crashed) return;
  // As with the lock itself: only the claim judged is removed.
  if ((await readFile(claimPath, 'utf8').catch(() => undefined)) === content) await unlink(claimPath).catch(() => undefined);
}

async function breakIfStale(path: string, owner: ProcessIdentity, options: Required<Omit<FileLockOptions, 'timeoutMs'>>): Promise<void> {
  const content = await readFile(path, 'utf8').catch(() => undefined);
  if (content === undefined || !(await isStale(path, content, options))) return;
  const releaseClaim = await claimBreak(path, owner, options.procRoot).catch(() => undefined);
  if (releaseClaim === undefined) return; // another breaker is at it; the caller waits and looks again
  try {
    // Judging took time (it reads /proc): the lock read may have been released since, by an owner that then
    // exited, and taken by a live one, or broken by another breaker and taken. Only the lock judged is broken.
    // Its owner is gone and no other breaker can act while the claim is held, so it cannot change between this
    // read and the rename; moving a live lock aside would let a third process take the path before it was put
    // back, and two writers would each hold the lock.
    if ((await readFile(path, 'utf8').catch(() => undefined)) !== content) return;
    const aside = `${path}.${process.pid}.${randomUUID()}.stale`;
    try {
      await rename(path, aside);
    } catch {
      return; // released meanwhile
    }
    const moved = await readFile(aside, 'utf8').catch(() => undefined);
    // A lock past its maximum age may still have a live owner, which may have released it and let a writer in
    // between the read and the rename: put that writer's lock back.
    if (moved !== content) await link(aside, path).catch(() => undefined);
    await unlink(aside).catch(() => undefined);
  } finally {
    await releaseClaim();
  }
}

/**
 * Takes the lock at `path`, waiting with backoff while another live process
 * holds it.
 *
 * @example
 * ```ts
 * const release = await acquireFileLock('audit.jsonl.lock', { timeoutMs: 5_000 });
 * try {
 *   // write under the lock
 * } finally {
 *   await release();
 * }
 * ```
 *
 * @throws {AuditChainError} `LOCK_TIMEOUT` when the wait exceeds the timeout.
 */
export async function acquireFileLock(path: string, options: FileLockOptions = {}): Promise<ReleaseLock> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const judge = { staleMs: options.staleMs ?? 30_000, maxAgeMs: options.maxAgeMs ?? 600_000, procRoot: options.procRoot ?? '/proc' };
  const owner = await ownIdentity(judge.procRoot);
  const token = `${JSON.stringify({ ...owner, token: randomUUID(), acquired_at: Date.now() })}\n`;
  const deadline = Date.now() + timeoutMs;
  let delay = 1;
  for (;;) {
    const release = await createOwnedFile(path, token);
    if (release) return release;
    await breakIfStale(path, owner, judge);
    if (Date.now() > deadline) {
      throw new AuditChainError('LOCK_TIMEOUT', `timed out after ${timeoutMs} ms waiting for the lock ${path}`);
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 25);
  }
}
