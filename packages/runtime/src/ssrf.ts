/**
 * @module ssrf
 * Outbound calls made on a caller's behalf (the gateway's
 * `/v0/management/api-call`, the workflow's code host and trackers) must
 * not reach the service's own network. The guard runs at connect time, on
 * the addresses the connection will really use, so a hostname that resolves
 * to a private address, or re-resolves to one later (DNS rebinding), is
 * refused before a single byte leaves.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Why an address is refused. */
export type BlockedRange = 'loopback' | 'private' | 'link-local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved';

// Most specific first: the metadata addresses sit inside the link-local and private ranges.
const ranges: [BlockedRange, string, number, 'ipv4' | 'ipv6'][] = [
  ['metadata', '169.254.169.254', 32, 'ipv4'],
  ['metadata', 'fd00:ec2::254', 128, 'ipv6'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['private', '100.64.0.0', 10, 'ipv4'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['multicast', 'ff00::', 8, 'ipv6'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'], // benchmarking
  // Documentation (RFC 5737, RFC 3849 below): never routed, so no real destination lives there.
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  // Deprecated site-local addresses are private by another name.
  ['private', 'fec0::', 10, 'ipv6'],
  ['reserved', '100::', 64, 'ipv6'], // discard-only
  ['reserved', '2001:db8::', 32, 'ipv6'], // documentation
  ['reserved', '2001::', 32, 'ipv6'], // Teredo: an IPv4 address behind an obfuscated tunnel
];

const lists = ranges.map(([name, network, prefix, family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { name, list };
});

/** The range an IP address falls in, or undefined when it is a public address. */
export function blockedRange(address: string): BlockedRange | undefined {
  let ip = address;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) is the IPv4 address underneath.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) ip = mapped[1]!;
  const family = isIP(ip);
  if (family === 0) return 'reserved';
  for (const { name, list } of lists) if (list.check(ip, family === 4 ? 'ipv4' : 'ipv6')) return name;
  if (family === 6) return embeddedIpv4Range(ip);
  return undefined;
}

/**
 * IPv6 addresses that carry an IPv4 address a network may translate to (NAT64 `64:ff9b::/96` and
 * `64:ff9b:1::/48`, 6to4 `2002::/16`) are as blocked as that IPv4 address: on a NAT64 network,
 * `64:ff9b::a9fe:a9fe` is the metadata service. IPv4-compatible addresses (`::a.b.c.d`, deprecated
 * since 2006) are refused outright.
 */
function embeddedIpv4Range(ip: string): BlockedRange | undefined {
  const words = ipv6Words(ip);
  if (!words) return 'reserved';
  const ipv4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  if (words.slice(0, 6).every((word) => word === 0)) return 'reserved';
  if (words[0] === 0x64 && words[1] === 0xff9b && (words.slice(2, 6).every((word) => word === 0) || words[2] === 1)) {
    return blockedRange(ipv4(words[6]!, words[7]!));
  }
  if (words[0] === 0x2002) return blockedRange(ipv4(words[1]!, words[2]!));
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (`isIP` already said it is one); undefined if it cannot be read. */
function ipv6Words(ip: string): number[] | undefined {
  let text = ip.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // A trailing dotted quad is two words.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((word) => Number.parseInt(word, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  const words = tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  return words.length === 8 && words.every((word) => Number.isInteger(word) && word >= 0 && word <= 0xffff) ? words : undefined;
}

/** Hosts and addresses a caller may reach even though they are private (e.g. a local model server). */
export interface SsrfPolicy {
  /** Host names (exact, lower-case) or IP addresses allowed despite their range. */
  allow: readonly string[];
}

/** A refused destination. */
export class SsrfBlocked extends Error {
  override name = 'SsrfBlocked';
  readonly code = 'SSRF_BLOCKED';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: BlockedRange,
  ) {
    super(`refusing to connect to ${host} (${address}): ${range} addresses are not allowed`);
  }
}

/** The shape of `dns.lookup`, which the guard wraps. */
export type LookupFunction = typeof dnsLookup;

/**
 * A `lookup` for `net.connect` that resolves every address of the host and
 * refuses the connection if any is in a blocked range (all of them, so a
 * host cannot smuggle a private address behind a public one).
 */
export function guardedLookup(policy: SsrfPolicy, resolve: LookupFunction = dnsLookup): LookupFunction {
  const allowed = new Set(policy.allow.map((h) => h.toLowerCase()));
  const guarded = (hostname: string, options: unknown, callback: (...args: unknown[]) => void) => {
    const cb = typeof options === 'function' ? (options as typeof callback) : callback;
    const wantsAll = typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    resolve(hostname, { all: true }, (error, addresses) => {
      if (error) return cb(error);
      const list = addresses as LookupAddress[];
      if (!allowed.has(hostname.toLowerCase())) {
        for (const { address } of list) {
          const range = blockedRange(address);
          if (range && !allowed.has(address)) return cb(new SsrfBlocked(hostname, address, range));
        }
      }
      if (list.length === 0) return cb(Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' }));
      if (wantsAll) return cb(null, list);
      return cb(null, list[0]!.address, list[0]!.family);
    });
  };
  return guarded as unknown as LookupFunction;
}

const HTTP_PROTOCOLS = ['http:', 'https:'] as const;

/**
 * Refuses a URL before any lookup: only http and https (or the `protocols`
 * given), and literal IPs checked up front.
 */
export function assertCallableUrl(url: string, policy: SsrfPolicy, protocols: readonly string[] = HTTP_PROTOCOLS): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`not a URL: ${url}`);
  }
  if (!protocols.includes(parsed.protocol)) {
    const names = protocols.map((p) => p.replace(/:$/, ''));
    throw new TypeError(
      `only ${names.slice(0, -1).join(', ')}${names.length > 1 ? ' and ' : ''}${names.at(-1)} URLs are allowed, got ${parsed.protocol}`,
    );
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && !policy.allow.includes(host)) {
    const range = blockedRange(host);
    if (range) throw new SsrfBlocked(host, host, range);
  }
  return parsed;
}

/** Options of {@link assertDestinationAllowed}. */
export interface DestinationCheckOptions {
  /** URL schemes accepted (default http and https). */
  protocols?: readonly string[];
  /** The resolver (default `dns.lookup`). */
  resolve?: LookupFunction;
  /** How long the lookup may take before the host counts as unresolvable (default 5 s). */
  lookupTimeoutMs?: number;
}

/**
 * Vets a destination the gateway will call later, on its own schedule (a
 * provider's `base_url` set through the management API, say): the checks of
 * {@link assertCallableUrl}, no credentials in the URL, and every address
 * the host resolves to now, by the rules of {@link guardedLookup}. A host
 * named in `policy.allow` is not looked up. Rejects with {@link SsrfBlocked},
 * a `TypeError` for a bad URL, or the resolver's error (a host that cannot
 * be resolved cannot be vouched for).
 *
 * @example
 * ```ts
 * await assertDestinationAllowed('https://models.example.com/v1', { allow: [] });
 * ```
 */
export async function assertDestinationAllowed(url: string, policy: SsrfPolicy, options: DestinationCheckOptions = {}): Promise<URL> {
  const parsed = assertCallableUrl(url, policy, options.protocols);
  // userinfo in a URL is a credential in the config, and it hides the host from a reader.
  if (parsed.username !== '' || parsed.password !== '') throw new TypeError('URLs with credentials (user:password@) are not allowed');
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 || policy.allow.some((allowed) => allowed.toLowerCase() === host.toLowerCase())) return parsed;
  const lookup = guardedLookup(policy, options.resolve);
  const timeoutMs = options.lookupTimeoutMs ?? 5_000;
  await new Promise<void>((resolve, reject) => {
    // A resolver that never answers must not hold the caller (a management PUT) open: the host cannot be vouched for.
    const timer = setTimeout(
      () => reject(Object.assign(new Error(`looking up ${host} took longer than ${timeoutMs} ms`), { code: 'ETIMEOUT' })),
      timeoutMs,
    );
    lookup(host, { all: true }, (error) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    });
  });
  return parsed;
}
