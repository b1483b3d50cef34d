/**
 * @module managementAuth
 * The rules that guard `/v0/management` and `/v0/operations`, in order:
 *
 * 1. an empty `remote-management.secret-key` hides every route (404);
 * 2. a client that is not on this machine gets 403 unless `allow-remote`
 *    is true (`X-Forwarded-For` counts only from `trusted-proxies`);
 * 3. an address locked out after 5 failed keys gets 429 with `Retry-After`
 *    for 30 minutes;
 * 4. the key (`Authorization: Bearer` or `X-Management-Key`) is compared in
 *    constant time; a missing or wrong key is 401, and a wrong one counts
 *    toward the lockout.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { respondError } from '@switchyard/http-kit';
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
  // Bounded: an attacker cycling addresses cannot grow it without limit.
  const failures = new Map<string, { count: number; lockedUntil: number }>();

  const lockedUntil = (address: string): number | undefined => {
    const entry = failures.get(address);
    if (!entry || entry.lockedUntil <= clock.now()) return undefined;
    return entry.lockedUntil;
  };

  const recordFailure = (address: string) => {
    const entry = failures.get(address) ?? { count: 0, lockedUntil: 0 };
    if (entry.lockedUntil !== 0 && entry.lockedUntil <= clock.now()) {
      entry.count = 0;
      entry.lockedUntil = 0;
    }
    entry.count++;
    if (entry.count >= maxFailures) entry.lockedUntil = clock.now() + lockoutMs;
    failures.delete(address);
    failures.set(address, entry);
    if (failures.size > TRACKED_ADDRESSES) failures.delete(failures.keys().next().value!);
  };

  const checkKey = (address: string, key: string | undefined): KeyCheck => {
    if (lockedUntil(address) !== undefined) return 'locked';
    if (!key) return 'missing';
    if (!timingSafeEqual(digest(key), digest(options.secretKey()))) {
      // Only a wrong key counts toward a lockout: a missing one guesses nothing.
      recordFailure(address);
      return 'wrong';
    }
    failures.delete(address);
    return 'ok';
  };

  const authorize: ManagementGuard['authorize'] = (incoming, key, authorizeOptions = {}) => {
    if (options.secretKey().length === 0) {
      return { ok: false, code: 'not_found', message: 'remote management is disabled (remote-management.secret-key is empty)' };
    }
    const address = incoming ? clientAddress(incoming, options.trustedProxies()) : '';
    if (!options.allowRemote() && !isLoopback(address)) {
      return { ok: false, code: 'forbidden', message: 'remote management is disabled (remote-management.allow-remote is false)' };
    }
    const until = lockedUntil(address);
    if (until !== undefined) {
      const seconds = Math.max(1, Math.ceil((until - clock.now()) / 1000));
      return {
        ok: false,
        code: 'too_many_requests',
        message: `too many failed management keys from this address; try again in ${seconds} s`,
        retryAfterSeconds: seconds,
      };
    }
    if (!key && authorizeOptions.session) return { ok: true };
    if (checkKey(address, key || undefined) !== 'ok') {
      return {
        ok: false,
        code: 'unauthorized',
        message: key ? 'wrong management key' : 'missing management key (Authorization: Bearer or X-Management-Key)',
      };
    }
    return { ok: true };
  };

  const middleware: MiddlewareHandler = async (c, next) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const key = incoming ? presentedManagementKey(incoming.headers) : undefined;
    const session = options.sessions?.valid(sessionToken(incoming?.headers.cookie)) ?? false;
    const decision = authorize(incoming, key, { session });
    if (decision.ok) return next();
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
    authorize,
    matches: (key) => {
      const secret = options.secretKey();
      return secret.length > 0 && timingSafeEqual(digest(key), digest(secret));
    },
  };
}
