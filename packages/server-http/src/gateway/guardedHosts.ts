/**
 * @module guardedHosts
 * DNS rebinding. A destination set through the management API passes the
 * SSRF guard when it is submitted, but the gateway looks its host up again
 * each time it opens a connection, minutes or days later, when the name may
 * resolve to 127.0.0.1 or 169.254.169.254. This module remembers the hosts
 * admitted that way and gives the outbound clients (relay transport, health
 * checks, failover) a connect-time `lookup` that applies the guard to those
 * hosts on every new connection. Hosts the operator's file names are looked
 * up as before: a local model server on 127.0.0.1 is a normal setup. The set
 * outlives the process in a {@link GuardedHostStore} (a file in `auth-dir`,
 * or the cluster's PostgreSQL, shared by every node).
 */
import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { guardedLookup, type LookupFunction, type SsrfPolicy } from '../controlPlane/ssrf.js';
import { type OutboundUrl, outboundUrls } from './config/outboundUrls.js';
import type { GatewayConfig } from './config/schema.js';
import type { GuardedHostStore } from './guardedHostStore.js';

/** Options of {@link GuardedHosts}. */
export interface GuardedHostsOptions {
  /** The allow-list in force (`remote-management.api-call-allow`), read at each guarded connection. */
  policy: () => SsrfPolicy;
  /** The resolver behind every outbound lookup and the API's submission check (default `dns.lookup`). */
  resolve?: LookupFunction;
  /** Where admissions are recorded before they count, and forgettings after (default: memory only). */
  store?: GuardedHostStore;
  /** The hosts guarded from the start: what `store` held when the process started. */
  hosts?: Iterable<string>;
  /** A forgetting the store could not record (the host stays recorded: guarded again after a restart, if named). */
  onStoreError?: (error: Error) => void;
}

/** The form a host is compared in: lower-case, without the root's trailing dot. */
function hostKey(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

/** The host of a destination that can rebind (a name, not an IP literal), or undefined. */
function rebindableHost({ url }: OutboundUrl): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
  return host === '' || isIP(host) !== 0 ? undefined : hostKey(host);
}

/**
 * The hosts admitted through the management API's SSRF check, and the
 * lookup that keeps holding them to it.
 *
 * A host stays guarded while any destination of the running config names
 * it, whoever wrote the config after it was admitted (a file edit or a
 * cluster reload does not launder it); the operator lets one reach a private
 * address by naming it in `api-call-allow`. Guarding is per host, as
 * connections are pooled per host: a host the file also names is guarded
 * for both once the API has admitted it.
 *
 * @example
 * ```ts
 * const guarded = new GuardedHosts({ policy: () => ({ allow: config['remote-management']['api-call-allow'] }) });
 * const transport = new UndiciTransport(pool, { lookup: guarded.lookup });
 * await guarded.admit(changedOutboundUrls(next, running)); // after the API's check passed, before writing `next`
 * ```
 */
export class GuardedHosts {
  /** Resolves every outbound host; the guard wraps it for guarded hosts. */
  readonly resolve: LookupFunction;
  /**
   * The `lookup` for outbound connections: `resolve` for most hosts, the SSRF
   * guard over `resolve` for guarded ones. Runs once per new connection,
   * never per request.
   */
  readonly lookup: LookupFunction;
  private readonly hosts = new Set<string>();
  private readonly policy: () => SsrfPolicy;
  private readonly store: GuardedHostStore | undefined;
  private readonly onStoreError: (error: Error) => void;
  /** The guard for the allow-list it was built from, rebuilt when a reload changes the list. */
  private guard: { allow: readonly string[]; lookup: LookupFunction } | undefined;

  constructor(options: GuardedHostsOptions) {
    this.policy = options.policy;
    this.store = options.store;
    this.onStoreError = options.onStoreError ?? (() => undefined);
    for (const host of options.hosts ?? []) this.hosts.add(hostKey(host));
    const resolve = options.resolve ?? dnsLookup;
    this.resolve = resolve;
    const lookup = (hostname: string, ...rest: unknown[]) => {
      const target = this.hosts.has(hostKey(hostname)) ? this.guardedLookup() : resolve;
      (target as (...args: unknown[]) => void)(hostname, ...rest);
    };
    this.lookup = lookup as unknown as LookupFunction;
  }

  /**
   * Guards the hosts of `destinations`, which the API's SSRF check has just passed, at once. IP literals
   * cannot rebind and are skipped. Resolves once the store has recorded the hosts new to it: the caller
   * writes the config naming them only then, so no restart or other node ever reads that config unguarded.
   */
  admit(destinations: readonly OutboundUrl[]): Promise<void> {
    const added: string[] = [];
    for (const destination of destinations) {
      const host = rebindableHost(destination);
      if (host === undefined || this.hosts.has(host)) continue;
      this.hosts.add(host);
      added.push(host);
    }
    return added.length > 0 && this.store ? this.store.add(added) : Promise.resolve();
  }

  /**
   * Forgets hosts no destination of `config` names any more: a later return through the file is the
   * operator's. A store of this node's own set forgets them too (its errors go to `onStoreError`).
   */
  retain(config: GatewayConfig): void {
    if (this.hosts.size === 0) return;
    const named = new Set(outboundUrls(config).map(rebindableHost));
    const forgotten = [...this.hosts].filter((host) => !named.has(host));
    for (const host of forgotten) this.hosts.delete(host);
    if (forgotten.length > 0 && this.store?.forget) this.store.forget(forgotten).catch(this.onStoreError);
  }

  /**
   * Guards the stored hosts that `config` names: the ones other nodes admitted since this node last
   * looked. Run before a config another node may have written is applied.
   */
  async refresh(config: GatewayConfig): Promise<void> {
    if (!this.store) return;
    const stored = await this.store.load();
    const named = new Set(outboundUrls(config).map(rebindableHost));
    for (const host of stored.map(hostKey)) if (named.has(host)) this.hosts.add(host);
  }

  /** Whether connections to `hostname` are guarded. */
  has(hostname: string): boolean {
    return this.hosts.has(hostKey(hostname));
  }

  /** The guarded hosts, sorted. */
  list(): string[] {
    return [...this.hosts].sort();
  }

  private guardedLookup(): LookupFunction {
    const { allow } = this.policy();
    if (this.guard?.allow !== allow) this.guard = { allow, lookup: guardedLookup({ allow }, this.resolve) };
    return this.guard.lookup;
  }
}
