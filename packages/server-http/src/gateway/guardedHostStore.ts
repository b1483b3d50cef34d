/**
 * @module guardedHostStore
 * Where the hosts the management API admitted are kept beyond memory, so
 * that a restart does not read the config the API wrote as the operator's
 * and trust its hosts again. A single gateway keeps them in
 * `auth-dir/.guarded-hosts.json`, beside `.quota.json` and `.sign-ins/`; a
 * cluster keeps them in PostgreSQL (`PostgresGuardedHostStore`), so every
 * node guards the hosts a `PUT` on any node admitted.
 */
import { basename } from 'node:path';
import { z } from 'zod';
import { writeFileAtomically } from './config/persist.js';
import { CoalescedWrites, readStateFile, type StateFileUnreadable } from './stateFile.js';

/**
 * The port behind `GuardedHosts` (gateway/guardedHosts.ts). Hosts are compared lower-case, without a trailing dot.
 *
 * @example
 * ```ts
 * const store = new FileGuardedHostStore('./auths/.guarded-hosts.json');
 * const guarded = new GuardedHosts({ policy, store, hosts: await store.load() });
 * ```
 */
export interface GuardedHostStore {
  /** Every host stored. */
  load(): Promise<readonly string[]>;
  /** Records `hosts` as admitted; resolves once the record is durable (before the config naming them is written). */
  add(hosts: readonly string[]): Promise<void>;
  /**
   * Forgets `hosts`, which the running config no longer names. A store of one node's set has it; a store
   * shared by a cluster does not, since another node may still name the host.
   */
  forget?(hosts: readonly string[]): Promise<void>;
}

/** The store's file could not be read as a set of hosts: the gateway refuses to start rather than guess. */
export class GuardedHostsUnreadableError extends Error {
  override name = 'GuardedHostsUnreadableError';
  readonly code = 'guarded_hosts_unreadable';
}

/** Far more than any config names; a larger file is not ours. */
const MAX_FILE_BYTES = 1024 * 1024;

const FileSchema = z.object({
  format_version: z.literal(1),
  hosts: z.array(z.string().min(1).max(253)),
});

/**
 * The hosts admitted on one gateway, in one JSON file (mode 0600, replaced
 * atomically). A missing file is an empty set. A file that cannot be read as
 * one (not JSON, another shape, a symlink, not a regular file) fails
 * {@link load} with {@link GuardedHostsUnreadableError}: treating it as empty
 * would trust every host the API ever set, and the file alone says which
 * hosts those are.
 *
 * @example
 * ```ts
 * const store = new FileGuardedHostStore('./auths/.guarded-hosts.json');
 * await store.add(['models.example.com']);
 * ```
 */
export class FileGuardedHostStore implements GuardedHostStore {
  /** What the file holds once the writes in flight land. */
  private readonly hosts = new Set<string>();
  private readonly writes = new CoalescedWrites(() =>
    writeFileAtomically(this.path, `${JSON.stringify({ format_version: 1, hosts: [...this.hosts].sort() }, null, 2)}\n`, { mode: 0o600 }),
  );

  constructor(readonly path: string) {}

  async load(): Promise<readonly string[]> {
    let text: string | undefined;
    try {
      text = await readStateFile(this.path, MAX_FILE_BYTES);
    } catch (error) {
      throw this.unreadable((error as StateFileUnreadable).reason, (error as Error).cause);
    }
    if (text === undefined) return [];
    let parsed: z.infer<typeof FileSchema>;
    try {
      parsed = FileSchema.parse(JSON.parse(text));
    } catch (error) {
      throw this.unreadable('it is not a list of hosts', error);
    }
    for (const host of parsed.hosts) this.hosts.add(host);
    return [...this.hosts];
  }

  add(hosts: readonly string[]): Promise<void> {
    for (const host of hosts) this.hosts.add(host);
    return this.writes.persist();
  }

  forget(hosts: readonly string[]): Promise<void> {
    for (const host of hosts) this.hosts.delete(host);
    return this.writes.persist();
  }

  private unreadable(reason: string, cause?: unknown): GuardedHostsUnreadableError {
    return new GuardedHostsUnreadableError(
      `cannot read ${this.path} (${reason}). It lists the hosts the management API set, which stay held to the SSRF guard; ` +
        `starting without it would trust them. Restore it, or check the outbound URLs of the config file yourself and then ` +
        `delete ${basename(this.path)} (the file's hosts are then trusted as yours)`,
      { cause },
    );
  }
}
