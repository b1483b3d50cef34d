/**
 * @module managementAuth
 * The rules that guard `/v0/management` and `/v0/operations`, in order:
 *
 * 1. an empty `remote-management.secret-key` hides every route (404);
 * 2. a client that is not on this machine gets 403 unless `allow-remote`
 *    is true (`X-Forwarded-For` counts only from `trusted-proxies`, and a
 *    forwarding header from any other peer makes the caller remote: a
 *    reverse proxy on this host must not make everyone local);
 * 3. the key (`Authorization: Bearer` or `X-Management-Key`) is compared in
 *    constant time; the right key, or a live session, is always served;
 * 4. otherwise an address locked out after 5 failed keys (IPv6: its /64)
 *    gets 429 with `Retry-After` for 30 minutes, as does everyone while the
 *    failures of all addresses together pass a global rate;
 * 5. a missing or wrong key is 401, and a wrong one counts toward both.
 *
 * A session cookie is ambient authority: a change it authorizes must come
 * from the gateway's own origin (`Origin`, or `Sec-Fetch-Site`).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { type AccessPolicy, respondError } from '@switchyard/http-kit';
import { type Clock, systemClock } from '@switchyard/runtime';
import type { MiddlewareHandler } from 'hono';

/** What the guard reads; functions, so a config reload applies at once. */
export interface ManagementAuthOptions {
  secretKey: () => string;
  allowRemote: () => boolean;
  /** Addresses of reverse proxies whose `X-Forwarded-For` is believed. */
  trustedProxies: () => readonly string[];
  /** Failed attempts before a lockout (default 5). */
  maxFailures?: number;
  /** Lockout length (default 30 minutes). */
  lockoutMs?: number;
  clock?: Clock;
  /** Dashboard sessions: a valid session cookie stands in for the key. */
  sessions?: SessionStore;
  /** Failed keys from all addresses together, within `globalWindowMs`, past which every wrong key is 429 (default 100). */
  maxGlobalFailures?: number;
  /** The window of `maxGlobalFailures` (default 1 minute). */
  globalWindowMs?: number;
  /** The Host and Origin rules that a cookie-authorized request must pass. */
  access?: () => AccessPolicy;
  /** Told of a loopback peer that sent forwarding headers without being a trusted proxy (the caller is then remote). */
  onUntrustedForward?: (peer: string) => void;
}

/** Name of the dashboard's session cookie. */
export const SESSION_COOKIE = 'switchyard_session';

/**
 * Browser sessions of the dashboard: a random token in an HttpOnly,
 * SameSite=Strict cookie, valid for `ttlMs`, kept in memory (a restart
 * signs everyone out).
 */
export class SessionStore {
  private readonly sessions = new Map<string, number>();
  private readonly clock: Clock;
  readonly ttlMs: number;

  constructor(options: { clock?: Clock; ttlMs?: number } = {}) {
    this.clock = options.clock ?? systemClock;
    this.ttlMs = options.ttlMs ?? 8 * 3_600_000;
  }

  /** Opens a session; returns its token. */
  create(): string {
    this.prune();
    const token = randomBytes(32).toString('base64url');
    this.sessions.set(token, this.clock.now() + this.ttlMs);
    return token;
  }

  valid(token: string | undefined): boolean {
    if (!token) return false;
    const expires = this.sessions.get(token);
    return expires !== undefined && expires > this.clock.now();
  }

  revoke(token: string | undefined): void {
    if (token) this.sessions.delete(token);
  }

  private prune(): void {
    const now = this.clock.now();
    for (const [token, expires] of this.sessions) if (expires <= now) this.sessions.delete(token);
  }
}

/** The session token in a request's cookies. */
export function sessionToken(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === SESSION_COOKIE) return rest.join('=');
  }
  return undefined;
}

/** What checking a presented key came to. */
export type KeyCheck = 'ok' | 'wrong' | 'missing' | 'locked';

/**
 * The guard's verdict on a caller, with every rule applied in order: the
 * error code of the first rule that refused it, or ok. `not_found` means
 * management is off (no `secret-key`).
 */
export type ManagementDecision =
  | { ok: true }
  | { ok: false; code: 'not_found' | 'forbidden' | 'too_many_requests' | 'unauthorized'; message: string; retryAfterSeconds?: number };

/** What {@link managementAuth} returns. */
export interface ManagementGuard {
  middleware: MiddlewareHandler;
  lockedOut(address: string): number | undefined;
  /** Checks a key for `address` with the lockout rules (for the dashboard's login form). */
  checkKey(address: string, key: string | undefined): KeyCheck;
  /** The client address of a request, as the guard sees it. */
  address(incoming: IncomingMessage): string;
  /** Whether the caller is on this machine (a forwarding header from an untrusted peer says it is not). */
  isLocal(incoming: IncomingMessage): boolean;
  /**
   * Every rule for a caller that presented `key` (the websocket upgrade uses
   * this with `X-Management-Key`). `session` lets a valid dashboard session
   * stand in for a missing key. A wrong key counts toward the lockout.
   */
  authorize(incoming: IncomingMessage | undefined, key: string | undefined, options?: { session?: boolean }): ManagementDecision;
  /**
   * Whether `key` is the management key now, in constant time, without
   * counting a failure (a key accepted earlier may have been changed since).
   */
  matches(key: string): boolean;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Strips the IPv4-mapped prefix (`::ffff:127.0.0.1` → `127.0.0.1`). */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** True for loopback addresses (127.0.0.0/8 and ::1). */
export function isLoopback(address: string): boolean {
  const ip = normalizeAddress(address);
  return ip === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

/** True when a request carries a forwarding header from a peer that is not a trusted proxy. */
export function forwardedByUntrustedPeer(req: IncomingMessage, trustedProxies: readonly string[]): boolean {
  if (trustedProxies.includes(normalizeAddress(req.socket.remoteAddress ?? ''))) return false;
  return FORWARDING_HEADERS.some((name) => req.headers[name] !== undefined);
}

/**
 * Whether a request reached the gateway over TLS: its own socket, or a trusted proxy's `X-Forwarded-Proto: https`
 * (the first hop's word, as the proxy nearest the client set it).
 */
export function cameOverTls(req: IncomingMessage, trustedProxies: readonly string[]): boolean {
  if ((req.socket as Partial<TLSSocket>).encrypted === true) return true;
  if (!trustedProxies.includes(normalizeAddress(req.socket.remoteAddress ?? ''))) return false;
  const proto = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',', 1)[0]?.trim().toLowerCase();
  return first === 'https';
}

/** The hextets of an IPv6 address (`::` expanded, an embedded IPv4 tail as two), or undefined when it is not one. */
function ipv6Groups(address: string): string[] | undefined {
  if (!address.includes(':')) return undefined;
  let text = address.toLowerCase().split('%', 1)[0]!;
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(Math.max(0, fill)).fill('0'), ...tail];
  return groups.length === 8 && groups.every((g) => /^[0-9a-f]{1,4}$/.test(g)) ? groups : undefined;
}

/**
 * The lockout bucket of an address: an IPv4 address is its own, an IPv6 address counts with its /64 (one
 * subscriber's allocation, through which a caller could otherwise rotate past any per-address limit).
 */
export function lockoutBucket(address: string): string {
  const groups = ipv6Groups(address);
  if (!groups) return address;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * The client's address: the socket's peer, or, when that peer is a trusted
 * proxy, the right-most address in `X-Forwarded-For` that is not a trusted
 * proxy itself.
 */
export function clientAddress(req: IncomingMessage, trustedProxies: readonly string[]): string {
  const peer = normalizeAddress(req.socket.remoteAddress ?? '');
  if (!trustedProxies.includes(peer)) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((hop) => normalizeAddress(hop.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) if (!trustedProxies.includes(hops[i]!)) return hops[i]!;
  return peer;
}

/** The key a caller presented, from either header. */
export function presentedManagementKey(headers: IncomingMessage['headers']): string | undefined {
  const authorization = headers.authorization;
  if (authorization?.toLowerCase().startsWith('bearer ')) return authorization.slice(7).trim();
  const key = headers['x-management-key'];
  return typeof key === 'string' ? key.trim() : undefined;
}

const TRACKED_ADDRESSES = 10_000;

/**
 * The headers as the access policy should judge them. The gateway's pages send `Referrer-Policy: no-referrer`, under
 * which a browser may send their own same-origin requests with `Origin: null`; `Sec-Fetch-Site: same-origin` says
 * they are the page's own, so the opaque Origin is dropped rather than refused.
 */
function sameOriginHeaders(headers: IncomingMessage['headers']): IncomingMessage['headers'] {
  if (headers.origin !== 'null' || headers['sec-fetch-site'] !== 'same-origin') return headers;
  const { origin: _opaque, ...rest } = headers;
  return rest;
}

/**
 * The guard, as Hono middleware (the node-server adapter passes the
 * node:http request as `c.env.incoming`).
 *
 * @example
 * ```ts
 * app.use('/v0/management/*', managementAuth({ secretKey: () => config.secret, allowRemote: () => false, trustedProxies: () => [] }).middleware);
 * ```
 */
export function managementAuth(options: ManagementAuthOptions): ManagementGuard {
  const clock = options.clock ?? systemClock;
  const maxFailures = options.maxFailures ?? 5;
  const lockoutMs = options.lockoutMs ?? 30 * 60_000;
  const maxGlobalFailures = options.maxGlobalFailures ?? 100;
  const globalWindowMs = options.globalWindowMs ?? 60_000;
  // Bounded: an attacker cycling addresses cannot grow it without limit.
  const failures = new Map<string, { count: number; lockedUntil: number }>();
  // When the last `maxGlobalFailures` failures happened (at most that many kept).
  const recentFailures: number[] = [];

  /** When the global rate lets wrong keys be judged again, or undefined when it is not exceeded. */
  const globalLockedUntil = (): number | undefined => {
    const now = clock.now();
    while (recentFailures.length > 0 && recentFailures[0]! <= now - globalWindowMs) recentFailures.shift();
    return recentFailures.length >= maxGlobalFailures ? recentFailures[0]! + globalWindowMs : undefined;
  };

  const lockedUntil = (address: string): number | undefined => {
    const entry = failures.get(lockoutBucket(address));
    const own = entry && entry.lockedUntil > clock.now() ? entry.lockedUntil : undefined;
    const global = globalLockedUntil();
    if (own === undefined) return global;
    return global === undefined ? own : Math.max(own, global);
  };

  const recordFailure = (address: string) => {
    const bucket = lockoutBucket(address);
    const entry = failures.get(bucket) ?? { count: 0, lockedUntil: 0 };
    if (entry.lockedUntil !== 0 && entry.lockedUntil <= clock.now()) {
      entry.count = 0;
      entry.lockedUntil = 0;
    }
    entry.count++;
    if (entry.count >= maxFailures) entry.lockedUntil = clock.now() + lockoutMs;
    failures.delete(bucket);
    failures.set(bucket, entry);
    if (failures.size > TRACKED_ADDRESSES) failures.delete(failures.keys().next().value!);
    recentFailures.push(clock.now());
    if (recentFailures.length > maxGlobalFailures) recentFailures.shift();
  };

  const matches = (key: string): boolean => {
    const secret = options.secretKey();
    return secret.length > 0 && timingSafeEqual(digest(key), digest(secret));
  };

  const checkKey = (address: string, key: string | undefined): KeyCheck => {
    // The right key is served whatever the lockout: a lockout slows guessing, it must not lock the operator out.
    if (key && matches(key)) {
      failures.delete(lockoutBucket(address));
      return 'ok';
    }
    if (lockedUntil(address) !== undefined) return 'locked';
    if (!key) return 'missing';
    // Only a wrong key counts toward a lockout: a missing one guesses nothing.
    recordFailure(address);
    return 'wrong';
  };

  const addressOf = (incoming: IncomingMessage): { address: string; local: boolean } => {
    const trusted = options.trustedProxies();
    const address = clientAddress(incoming, trusted);
    if (!isLoopback(address)) return { address, local: false };
    if (forwardedByUntrustedPeer(incoming, trusted)) {
      // A reverse proxy on this host that is not in trusted-proxies: its callers are not this machine.
      options.onUntrustedForward?.(address);
      return { address, local: false };
    }
    return { address, local: true };
  };

  const authorize: ManagementGuard['authorize'] = (incoming, key, authorizeOptions = {}) => {
    if (options.secretKey().length === 0) {
      return { ok: false, code: 'not_found', message: 'remote management is disabled (remote-management.secret-key is empty)' };
    }
    const { address, local } = incoming ? addressOf(incoming) : { address: '', local: false };
    if (!options.allowRemote() && !local) {
      return { ok: false, code: 'forbidden', message: 'remote management is disabled (remote-management.allow-remote is false)' };
    }
    if (!key && authorizeOptions.session) return { ok: true };
    const result = checkKey(address, key || undefined);
    if (result === 'ok') return { ok: true };
    if (result === 'locked') {
      const seconds = Math.max(1, Math.ceil(((lockedUntil(address) ?? clock.now()) - clock.now()) / 1000));
      return {
        ok: false,
        code: 'too_many_requests',
        message: `too many failed management keys from this address; try again in ${seconds} s`,
        retryAfterSeconds: seconds,
      };
    }
    return {
      ok: false,
      code: 'unauthorized',
      message: key ? 'wrong management key' : 'missing management key (Authorization: Bearer or X-Management-Key)',
    };
  };

  const middleware: MiddlewareHandler = async (c, next) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const key = incoming ? presentedManagementKey(incoming.headers) : undefined;
    const session = options.sessions?.valid(sessionToken(incoming?.headers.cookie)) ?? false;
    const decision = authorize(incoming, key, { session });
    if (decision.ok) {
      // Authorized by the cookie alone: the browser sent it, so the page that made it send must be ours.
      if (!key && session && incoming && options.access) {
        const refusal = options
          .access()
          // The dashboard's config editor sends YAML, which (unlike text/plain) no other site can send without a preflight.
          .check({
            method: c.req.method,
            headers: sameOriginHeaders(incoming.headers),
            authorization: 'cookie',
            alsoAccepts: ['application/yaml'],
          });
        if (refusal) return respondError(c, refusal.code, refusal.message, refusal.details);
      }
      return next();
    }
    // With management off, the routes are hidden rather than refused.
    if (decision.code === 'not_found') return respondError(c, 'not_found', `no route for ${c.req.method} ${c.req.path}`);
    const headers = decision.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(decision.retryAfterSeconds) };
    return respondError(c, decision.code, decision.message, undefined, headers);
  };

  return {
    middleware,
    lockedOut: lockedUntil,
    checkKey,
    address: (incoming) => clientAddress(incoming, options.trustedProxies()),
    isLocal: (incoming) => addressOf(incoming).local,
    authorize,
    matches,
  };
}
