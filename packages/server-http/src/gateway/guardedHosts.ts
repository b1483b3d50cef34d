/**
 * @module guardedHosts
 * DNS rebinding. A destination set through the management API passes the
 * SSRF guard when it is submitted, but the gateway looks its host up again
 * each time it opens a connection, minutes or days later, when the name may
 * resolve to 127.0.0.1 or 169.254.169.254. This module remembers the hosts
 * admitted that way and gives every outbound client of the gateway a
 * connect-time `lookup` that applies the guard to those hosts on every new
 * connection: the relay transport (so websocket routes too), health checks
 * and failover, and the calls the gateway makes on its own: sign-ins and
 * OAuth refreshes, chat and pager notifications (an undici Agent on this
 * lookup), e-mail (the SMTP connection is opened with it and handed to
 * nodemailer, which would otherwise resolve the name itself) and trace
 * exports (the exporter's agent). Quota snapshots are stricter: they vet
 * every host at every call, over the same resolver. Hosts the operator's file
 * names are looked up as before: a local model server on 127.0.0.1 is a
 * normal setup. The set outlives the process in a {@link GuardedHostStore}
 * (a file in `auth-dir`, or the cluster's PostgreSQL, shared by every node).
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

/** Where an `oidc_url` template takes the region a sign-in names. */
const REGION_SLOT = '{region}';
/** The region names the sign-in flow accepts in that slot (it refuses any other before building the URL). */
const REGION_NAME = '[a-z]{2}(?:-[a-z]+)+-\\d{1,2}';

/** The host of a URL, without IPv6 brackets; undefined when it does not parse. */
function hostnameOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
}

/**
 * The host of a destination that can rebind (a name, not an IP literal), or undefined. An `oidc_url`
 * template with the region in its host reaches one host per region a sign-in names, of which the
 * submission checked one: its key is the template's host (`oidc.{region}.example.com`), standing for all.
 */
function rebindableHost({ url, value }: OutboundUrl): string | undefined {
  const template = value.includes(REGION_SLOT) ? hostnameOf(value) : undefined;
  if (template?.includes(REGION_SLOT)) return hostKey(template);
  const host = hostnameOf(url);
  return host === undefined || host === '' || isIP(host) !== 0 ? undefined : hostKey(host);
}

/** The hosts a template key stands for: its slot filled with any region name. */
function templatePattern(key: string): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${key.split(REGION_SLOT).map(literal).join(REGION_NAME)}$`);
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
  /** The template keys among `hosts`, as patterns; rebuilt whenever `hosts` changes. */
  private templates: RegExp[] = [];
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
    this.hostsChanged();
    const resolve = options.resolve ?? dnsLookup;
    this.resolve = resolve;
    const lookup = (hostname: string, ...rest: unknown[]) => {
      const target = this.has(hostname) ? this.guardedLookup() : resolve;
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
    this.hostsChanged();
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
    this.hostsChanged();
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
    this.hostsChanged();
  }

  /** Whether connections to `hostname` are guarded: it was admitted, or an admitted `oidc_url` template makes it. */
  has(hostname: string): boolean {
    const key = hostKey(hostname);
    return this.hosts.has(key) || this.templates.some((template) => template.test(key));
  }

  /** The guarded hosts, sorted (a template's as written: `oidc.{region}.example.com`). */
  list(): string[] {
    return [...this.hosts].sort();
  }

  private hostsChanged(): void {
    this.templates = [...this.hosts].filter((host) => host.includes(REGION_SLOT)).map(templatePattern);
  }

  private guardedLookup(): LookupFunction {
    const { allow } = this.policy();
    if (this.guard?.allow !== allow) this.guard = { allow, lookup: guardedLookup({ allow }, this.resolve) };
    return this.guard.lookup;
  }
}
