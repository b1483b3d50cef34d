/**
 * @module access
 * Who may talk to the agent session server.
 *
 * - **Host allowlist** (DNS-rebinding protection). A web page on a hostile
 *   domain can make its own name resolve to 127.0.0.1 and then call this
 *   server from the victim's browser; its requests still carry the hostile
 *   name in `Host`. Only listed hosts are served (localhost, 127.0.0.1 and
 *   ::1 by default); any other gets 403.
 * - **Origin check** (CSRF). A browser page from another origin cannot post
 *   messages or upload files unless CORS allows that origin.
 * - **CORS**: the origins allowed to call the API from a browser.
 * - **API key** (optional): `Authorization: Bearer <key>`, compared in
 *   constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { AccessPolicy, rateLimitedWarning, respondError, untrustedForwardWarning } from '@switchyard/http-kit';
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';

/** The hosts served when none are configured. */
export const DEFAULT_ALLOWED_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** Splits a Host header into a lower-case hostname (IPv6 without brackets) and port. */
export function parseHost(header: string): { hostname: string; port: string } | undefined {
  const value = header.trim().toLowerCase();
  const match = /^(?:\[([0-9a-f:.]+)\]|([^:[\]/\s@]+))(?::(\d{1,5}))?$/.exec(value);
  if (!match) return undefined;
  return { hostname: (match[1] ?? match[2])!, port: match[3] ?? '' };
}

/** True when `header` is allowed by `allowed` (`*`, a hostname, or `hostname:port`; IPv6 with or without brackets). */
export function hostAllowed(header: string, allowed: readonly string[]): boolean {
  const host = parseHost(header);
  if (!host) return false;
  return allowed.some((entry) => {
    const wanted = entry.trim().toLowerCase();
    if (wanted === '*') return true;
    const parsed = parseHost(wanted.includes(':') && !wanted.startsWith('[') && wanted.split(':').length > 2 ? `[${wanted}]` : wanted);
    if (!parsed) return false;
    return parsed.hostname === host.hostname && (parsed.port === '' || parsed.port === host.port);
  });
}

/** Refuses requests whose `Host` header is not allowed. */
export function hostAllowlist(allowed: readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header('host');
    if (!header) return respondError(c, 'bad_request', 'the Host header is required');
    if (!hostAllowed(header, allowed)) {
      return respondError(
        c,
        'forbidden',
        `host ${JSON.stringify(header)} is not allowed: this server answers only to ${allowed.join(', ')} (DNS-rebinding protection); add the host to allowedHosts to serve it`,
      );
    }
    return next();
  };
}

const originAllowedByCors = (origin: string, origins: readonly string[]) => origins.includes('*') || origins.includes(origin);

/**
 * CORS for the configured origins, and refusal of state-changing requests
 * from other origins (a browser sends `Origin` on every cross-origin POST).
 */
export function originPolicy(origins: readonly string[]): MiddlewareHandler[] {
  const corsMiddleware = cors({
    origin: (origin) => (originAllowedByCors(origin, origins) ? origin : null),
    allowMethods: ['GET', 'POST', 'OPTIONS'],
    allowHeaders: ['content-type', 'authorization', 'last-event-id'],
    maxAge: 600,
  });
  const csrf: MiddlewareHandler = async (c, next) => {
    const origin = c.req.header('origin');
    if (origin === undefined || c.req.method === 'GET' || c.req.method === 'HEAD' || c.req.method === 'OPTIONS') return next();
    let sameOrigin = false;
    try {
      sameOrigin = origin !== 'null' && new URL(origin).host === (c.req.header('host') ?? '').toLowerCase();
    } catch {
      sameOrigin = false;
    }
    if (!sameOrigin && !originAllowedByCors(origin, origins)) {
      return respondError(
        c,
        'forbidden',
        `requests from origin ${JSON.stringify(origin)} are not allowed; add it to cors.origins to allow it`,
      );
    }
    return next();
  };
  return [corsMiddleware, csrf];
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Requires `Authorization: Bearer <apiKey>` (constant-time comparison of digests). */
export function bearerKey(apiKey: string): MiddlewareHandler {
  const expected = digest(apiKey);
  return async (c, next) => {
    const match = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '');
    if (!match || !timingSafeEqual(digest(match[1]!.trim()), expected)) {
      return respondError(c, 'unauthorized', 'a valid API key is required: Authorization: Bearer <key>', undefined, {
        'WWW-Authenticate': 'Bearer',
      });
    }
    return next();
  };
}

/**
 * Without an API key, the server is for this machine alone: a remote peer, or a request a reverse proxy on this
 * host forwarded (`X-Forwarded-For`, `Forwarded`, `X-Real-IP` from a peer that is not a trusted proxy), is refused,
 * unless `remoteCallers` (`insecure` on a public bind) serves them anyway.
 * State-changing requests must be JSON (multipart for `/upload`) or carry no body, so no HTML form can post here.
 */
export function localCallersOnly(
  trustedProxies: readonly string[],
  onWarning: (message: string) => void = () => undefined,
  remoteCallers = false,
): MiddlewareHandler {
  const policy = new AccessPolicy({ bindHost: '127.0.0.1', trustedProxies, allowedHosts: ['*'], allowedOrigins: ['*'] });
  const warn = rateLimitedWarning(onWarning);
  return async (c, next) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (incoming && !remoteCallers && !policy.callerIsLocal(incoming.socket.remoteAddress, incoming.headers)) {
      const peer = incoming.socket.remoteAddress;
      if (policy.forwardedByUntrustedPeer(peer, incoming.headers)) warn(untrustedForwardWarning(peer));
      return respondError(
        c,
        'forbidden',
        'this agent has no API key, so it serves only this machine; start it with --api-key-env to serve others',
      );
    }
    const headers = incoming?.headers ?? Object.fromEntries(c.req.raw.headers);
    const refusal = policy.check({
      method: c.req.method,
      headers: { host: 'localhost', ...headers },
      authorization: 'loopback',
      multipart: c.req.path === '/upload',
    });
    if (refusal) return respondError(c, refusal.code, refusal.message, refusal.details);
    return next();
  };
}
