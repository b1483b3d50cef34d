/**
 * @module directoryClaim
 * Who is using an auth directory, so that a rekey never runs beside a
 * writer in another process. Node has no `flock`, so each open file store
 * publishes a claim file in the directory, `.lock-<pid>-<random>` (mode
 * 0600, written atomically), saying which process holds it, on which host,
 * and whether it is rekeying. A rekey is exclusive; stores are shared:
 *
 * - A store publishes its claim, then looks for a live rekey: if there is
 *   one, it withdraws and refuses to open.
 * - A rekey turns its own claim into a rekey claim, then looks for any
 *   other live claim: if there is one, it turns back and refuses.
 *
 * Each side writes before it looks, so of two racing, at least one sees
 * the other (both may refuse; neither runs unseen). A claim is stale when
 * its process is gone: same host and `kill(pid, 0)` says no such process,
 * or it names this very process but is not one of its claims (a restarted
 * container's PID 1). A PID is reused after a reboot or a wrap, so on Linux
 * a claim also records when its process started (`processStart.ts`), and
 * one whose PID now runs a process of another boot or start time is stale
 * too; a claim without that record (written by an older version, or where
 * there is no `/proc`) is judged by its PID alone. Stale claims are
 * removed by whoever finds them. A
 * claim from another host cannot be checked and counts as live; the error
 * names its file, to remove by hand once that process is known to be gone.
 */
import { randomBytes } from 'node:crypto';
import { readdir, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CredentialsError } from '../errors.js';
import { bootId, type ProcessStart, processStart } from './processStart.js';
import { readConfined, writeFileAtomic } from './safeFiles.js';

/** Prefix of claim files; like every name starting with `.`, never a credential. */
export const CLAIM_PREFIX = '.lock-';
const CLAIM_MAX_BYTES = 4096;
/** A directory the process may not write to: it cannot claim it, and nobody it could race with writes there either. */
const READ_ONLY = new Set(['EROFS', 'EACCES', 'EPERM']);

/** What a claim file says. */
export interface ClaimOwner {
  pid: number;
  host: string;
  /** When the claim was made (ISO 8601). */
  since: string;
  purpose: 'store' | 'rekey';
  /** When the holder started (Linux); absent in claims of older versions and where there is no `/proc`. */
  started?: ProcessStart;
}

/** Claim files this process holds: a claim naming this PID but missing here was left by an earlier process. */
const ownClaims = new Set<string>();
/** When this process started, read once: it never changes. */
let ownStart: Promise<ProcessStart | undefined> | undefined;

/** One store's claim on a directory. */
export class DirectoryClaim {
  private purpose: ClaimOwner['purpose'] = 'store';
  private released = false;

  private constructor(
    private readonly directory: string,
    private readonly realDirectory: string,
    /** The claim file's name; undefined when the directory is read-only to this process. */
    private readonly name: string | undefined,
    private readonly since: string,
  ) {}

  /** Claims `directory` for a store; refuses (`in_use`) while another process rekeys it. */
  static async take(directory: string, realDirectory: string): Promise<DirectoryClaim> {
    const name = `${CLAIM_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`;
    const claim = new DirectoryClaim(directory, realDirectory, name, new Date().toISOString());
    ownClaims.add(name);
    try {
      await claim.publish();
    } catch (error) {
      ownClaims.delete(name);
      if (!READ_ONLY.has(errorCode(error))) throw error;
      return new DirectoryClaim(directory, realDirectory, undefined, claim.since).refuseIfRekeyed();
    }
    try {
      return await claim.refuseIfRekeyed();
    } catch (error) {
      await claim.release();
      throw error;
    }
  }

  /** Makes this claim exclusive for a rekey; refuses (`in_use`) while any other live claim exists. */
  async beginRekey(): Promise<void> {
    if (this.name === undefined) {
      throw new CredentialsError('store_failed', `cannot rekey ${this.directory}: this process may not write there`);
    }
    this.purpose = 'rekey';
    try {
      await this.publish();
    } catch (error) {
      this.purpose = 'store';
      throw error;
    }
    const others = await this.liveClaims();
    if (others.length > 0) {
      await this.endRekey();
      throw inUse(this.directory, others, 'rekey it: stop the gateway (or any other program with this store open) first');
    }
  }

  /** Back to a shared claim once the rekey is over. */
  async endRekey(): Promise<void> {
    this.purpose = 'store';
    if (!this.released) await this.publish();
  }

  /** Removes the claim file. */
  async release(): Promise<void> {
    if (this.released || this.name === undefined) return;
    this.released = true;
    await unlink(join(this.directory, this.name)).catch(() => undefined);
    ownClaims.delete(this.name);
  }

  private async refuseIfRekeyed(): Promise<DirectoryClaim> {
    const rekeys = (await this.liveClaims()).filter((claim) => claim.owner.purpose === 'rekey');
    if (rekeys.length > 0) throw inUse(this.directory, rekeys, 'open it: wait for the rekey to finish');
    return this;
  }

  private async publish(): Promise<void> {
    ownStart ??= processStart(process.pid);
    const started = await ownStart;
    const owner: ClaimOwner = { pid: process.pid, host: hostname(), since: this.since, purpose: this.purpose, ...(started && { started }) };
    await writeFileAtomic(this.directory, this.name!, `${JSON.stringify(owner)}\n`);
  }

  /** The other claims whose process may still run; removes the stale ones on the way. */
  private async liveClaims(): Promise<{ name: string; owner: ClaimOwner }[]> {
    const live: { name: string; owner: ClaimOwner }[] = [];
    for (const name of await readdir(this.directory)) {
      if (!name.startsWith(CLAIM_PREFIX) || name === this.name) continue;
      const owner = await this.readClaim(name);
      if (!owner) continue;
      if (await isStale(name, owner)) await unlink(join(this.directory, name)).catch(() => undefined);
      else live.push({ name, owner });
    }
    return live;
  }

  private async readClaim(name: string): Promise<ClaimOwner | undefined> {
    try {
      const read = await readConfined(this.directory, this.realDirectory, name, CLAIM_MAX_BYTES);
      if (read.kind !== 'file') return undefined;
      const owner = JSON.parse(read.text) as Partial<ClaimOwner>;
      if (!Number.isSafeInteger(owner.pid) || (owner.pid as number) <= 0 || typeof owner.host !== 'string') return undefined;
      return {
        pid: owner.pid as number,
        host: owner.host,
        since: typeof owner.since === 'string' ? owner.since : 'an unknown time',
        purpose: owner.purpose === 'rekey' ? 'rekey' : 'store',
        ...startedOf(owner.started),
      };
    } catch {
      // Not a claim this code wrote (claims are written whole): not one to honour.
      return undefined;
    }
  }
}

/** The errno code of a failed write, raw or wrapped by {@link writeFileAtomic}. */
function errorCode(error: unknown): string {
  const { code, cause } = error as { code?: unknown; cause?: { code?: unknown } };
  const errno = error instanceof CredentialsError ? cause?.code : code;
  return typeof errno === 'string' ? errno : '';
}

/** A claim's record of when its process started, if it has one that reads as such. */
function startedOf(value: unknown): { started?: ProcessStart } {
  const { boot_id, start_ticks } = (value ?? {}) as Partial<ProcessStart>;
  if (typeof boot_id !== 'string' || boot_id.length === 0 || !Number.isSafeInteger(start_ticks) || (start_ticks as number) < 0) {
    return {};
  }
  return { started: { boot_id, start_ticks: start_ticks as number } };
}

async function isStale(name: string, owner: ClaimOwner): Promise<boolean> {
  if (owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return !ownClaims.has(name);
  if (!processExists(owner.pid)) return true;
  return owner.started !== undefined && (await startedOtherwise(owner.pid, owner.started));
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists, under another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Whether the process running as `pid` now is a later one than the claim's: it started in another boot, or at
 * another time. False when that cannot be read (no `/proc`): then the PID is all there is to go by.
 */
async function startedOtherwise(pid: number, started: ProcessStart): Promise<boolean> {
  const now = await processStart(pid);
  if (now) return now.boot_id !== started.boot_id || now.start_ticks !== started.start_ticks;
  // The PID's start cannot be read (a `/proc` hiding other users' processes, or it just exited); a claim from an
  // earlier boot is stale all the same.
  const boot = await bootId();
  return boot !== undefined && boot !== started.boot_id;
}

function inUse(directory: string, claims: { name: string; owner: ClaimOwner }[], cannot: string): CredentialsError {
  const holders = claims
    .map(({ name, owner }) => {
      const what = owner.purpose === 'rekey' ? 'a rekey' : 'a credential store';
      return `${what} in process ${owner.pid} on host ${owner.host} since ${owner.since} (${join(directory, name)})`;
    })
    .join('; ');
  return new CredentialsError(
    'in_use',
    `the auth directory ${directory} is in use by ${holders}; cannot ${cannot}. If that process is gone, remove its lock file.`,
  );
}
