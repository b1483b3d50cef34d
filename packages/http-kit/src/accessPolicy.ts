/**
 * @module accessPolicy
 * Who may drive a Switchyard server, decided in one place for the gateway,
 * the workflow API and the agent session server.
 *
 * - **Binds.** A server reachable from other machines with no client keys is
 *   refused at start and on every reload, unless the operator says
 *   `insecure`; on loopback without keys it starts, with a warning.
 * - **Host allowlist** (DNS rebinding). Where access rests on loopback or a
 *   cookie, only loopback names, the bind address, the host of `self_url`
 *   and configured names are served: a hostile page whose name resolves to
 *   127.0.0.1 still sends its own name in `Host`.
 * - **Origin** (CSRF and cross-site websockets). Checked on every websocket
 *   upgrade and on every state-changing request authorized by a cookie or by
 *   loopback alone. No `Origin` passes: CLIs and SDKs send none, and a
 *   browser always does on the requests that matter.
 * - **Content type.** Those same state-changing requests must be JSON (or
 *   multipart where a route takes uploads) or carry no body: an HTML form
 *   cannot send either without CORS.
 * - **Forwarded headers.** `X-Forwarded-For`, `Forwarded` or `X-Real-IP`
 *   from a loopback peer that is not a trusted proxy make the caller remote:
 *   a reverse proxy on the same host must not make every client local.
 *
 * Requests authorized by a client key or a webhook signature are judged on
 * the key alone.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { type FieldDetails, fieldDetail } from './apiError.js';

/** How a request was authorized, which decides what else it must show. */
export type Authorization = 'key' | 'signature' | 'cookie' | 'loopback';

/** A refusal, in the control plane's terms. */
export interface AccessRefusal {
  status: 400 | 403 | 415;
  code: 'bad_request' | 'forbidden' | 'unsupported_media_type';
  message: string;
  /** The header at fault, where one is. */
  details?: FieldDetails;
}

/** Refused start-up or reload: a server others can reach, with no client keys. */
export class UnsafeBindError extends Error {
  override name = 'UnsafeBindError';
  readonly code = 'unsafe_bind';
}

/** Names and addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) || bare === '::ffff:127.0.0.1';
}

/** True for a loopback peer address (127.0.0.0/8, ::1, and their IPv4-mapped forms). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  return isLoopbackHost(address.replace(/^::ffff:/i, ''));
}

/**
 * Refuses a bind that others can reach when no client key is set, unless `insecure`.
 *
 * @example
 * ```ts
 * assertSafeBind({ host: '0.0.0.0', hasKeys: false, insecure: false, server: 'the gateway', howToSetKey: 'set api-keys in the config' });
 * // throws UnsafeBindError
 * ```
 */
export function assertSafeBind(options: { host: string; hasKeys: boolean; insecure?: boolean; server: string; howToSetKey: string }): void {
  if (options.hasKeys || options.insecure || isLoopbackHost(options.host)) return;
  throw new UnsafeBindError(
    `refusing to serve ${options.server} on ${options.host} with no client key: anyone who can reach it could drive it. ` +
      `To fix it, ${options.howToSetKey}, or bind 127.0.0.1; --insecure serves it open anyway.`,
  );
}

/**
 * The start-up warning for a server without keys (undefined when there is nothing to warn of): on loopback, every
 * program on this machine can drive it; elsewhere (a bind `insecure` let through), anyone who can reach it.
 */
export function openLoopbackWarning(options: { host: string; hasKeys: boolean; server: string }): string | undefined {
  if (options.hasKeys) return undefined;
  if (!isLoopbackHost(options.host)) {
    return `${options.server} listens on ${options.host} with no client key (--insecure): anyone who can reach it can drive it`;
  }
  return `${options.server} has no client key: every program on this machine can drive it (web pages cannot: Host and Origin are checked)`;
}

/** Splits a Host header into a lower-case hostname (IPv6 without brackets) and port. */
export function parseHostHeader(header: string): { hostname: string; port: string } | undefined {
  const value = header.trim().toLowerCase();
  const match = /^(?:\[([0-9a-f:.]+)\]|([^:[\]/\s@]+))(?::(\d{1,5}))?$/.exec(value);
  if (!match) return undefined;
  return { hostname: (match[1] ?? match[2])!, port: match[3] ?? '' };
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

/** Options of {@link AccessPolicy}. */
export interface AccessPolicyOptions {
  /** The address the server listens on. */
  bindHost: string;
  /** More `Host` names to serve (`name` or `name:port`; `*` serves any). */
  allowedHosts?: readonly string[];
  /** The server's public URL (`self_url`): its host is served too. */
  selfUrl?: string;
  /** Origins allowed to make state-changing requests and websocket upgrades (`*` allows any). */
  allowedOrigins?: readonly string[];
  /** Peers whose forwarded headers are believed (exact addresses). */
  trustedProxies?: readonly string[];
}

/** What {@link AccessPolicy.check} needs to know of a request. */
export interface AccessRequest {
  method: string;
  headers: IncomingHttpHeaders;
  authorization: Authorization;
  /** A websocket upgrade: Origin is checked whatever authorized it. */
  upgrade?: boolean;
  /** The route takes multipart uploads. */
  multipart?: boolean;
  /**
   * Body media types taken besides JSON under ambient authority (`application/yaml` for a config
   * editor). Only types a browser cannot send cross-site without a CORS preflight belong here: never
   * `text/plain`, `application/x-www-form-urlencoded` or `multipart/form-data`, which it can.
   */
  alsoAccepts?: readonly string[];
}

/** The body types a browser sends to another site without a CORS preflight: never taken under ambient authority. */
const CROSS_SITE_SENDABLE = new Set(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', '']);

/**
 * One server's access rules.
 *
 * @example
 * ```ts
 * const policy = new AccessPolicy({ bindHost: '127.0.0.1' });
 * const refusal = policy.check({ method: 'POST', headers: req.headers, authorization: 'loopback' });
 * if (refusal) return respondError(c, refusal.code, refusal.message);
 * ```
 */
export class AccessPolicy {
  private readonly hosts: string[];
  private readonly origins: ReadonlySet<string>;
  private readonly trusted: ReadonlySet<string>;

  constructor(readonly options: AccessPolicyOptions) {
    const hosts = [...LOOPBACK_NAMES, ...(options.allowedHosts ?? [])];
    const bind = options.bindHost.replace(/^\[(.*)\]$/, '$1');
    if (bind !== '' && bind !== '0.0.0.0' && bind !== '::') hosts.push(bind);
    if (options.selfUrl) {
      try {
        hosts.push(new URL(options.selfUrl).host);
      } catch {
        // A malformed self_url is the config's to refuse; it adds no host here.
      }
    }
    this.hosts = hosts.map((h) => h.trim().toLowerCase());
    this.origins = new Set((options.allowedOrigins ?? []).map((o) => o.trim().toLowerCase().replace(/\/$/, '')));
    this.trusted = new Set((options.trustedProxies ?? []).map(normalizeAddress));
  }

  /** Whether a `Host` header names this server. */
  hostAllowed(header: string | undefined): boolean {
    if (!header) return false;
    const host = parseHostHeader(header);
    if (!host) return false;
    return this.hosts.some((entry) => {
      if (entry === '*') return true;
      const bracketed = entry.includes(':') && !entry.startsWith('[') && entry.split(':').length > 2 ? `[${entry}]` : entry;
      const wanted = parseHostHeader(bracketed);
      return wanted !== undefined && wanted.hostname === host.hostname && (wanted.port === '' || wanted.port === host.port);
    });
  }

  /** Whether a request's `Origin` may act here: none, the server's own, or an allowed one. */
  originAllowed(origin: string | undefined, host: string | undefined): boolean {
    if (origin === undefined) return true;
    const normalized = origin.trim().toLowerCase();
    if (this.origins.has('*') || this.origins.has(normalized)) return true;
    if (normalized === 'null') return false;
    try {
      return host !== undefined && new URL(normalized).host === host.trim().toLowerCase() && this.hostAllowed(host);
    } catch {
      return false;
    }
  }

  /** True when a forwarding header came from a peer that is not a trusted proxy. */
  forwardedByUntrustedPeer(peer: string | undefined, headers: IncomingHttpHeaders): boolean {
    if (this.trusted.has(normalizeAddress(peer ?? ''))) return false;
    return FORWARDING_HEADERS.some((name) => headers[name] !== undefined);
  }

  /**
   * Whether the caller is on this machine: a loopback peer that forwarded nobody's request. A trusted proxy's
   * caller is local only when the address it names is loopback.
   */
  callerIsLocal(peer: string | undefined, headers: IncomingHttpHeaders): boolean {
    if (!isLoopbackAddress(peer)) return false;
    if (!FORWARDING_HEADERS.some((name) => headers[name] !== undefined)) return true;
    if (!this.trusted.has(normalizeAddress(peer ?? ''))) return false;
    const forwarded = headers['x-forwarded-for'];
    const hops = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').map((h) => normalizeAddress(h.trim()));
    const client = [...hops].reverse().find((hop) => hop !== '' && !this.trusted.has(hop));
    return client === undefined || isLoopbackAddress(client);
  }

  /** The refusal a request earns, or undefined when it may go on. */
  check(request: AccessRequest): AccessRefusal | undefined {
    const { headers } = request;
    const host = first(headers.host);
    const ambient = request.authorization === 'cookie' || request.authorization === 'loopback';
    if (ambient) {
      if (!host) return { status: 400, code: 'bad_request', message: 'the Host header is required' };
      if (!this.hostAllowed(host)) {
        return {
          status: 403,
          code: 'forbidden',
          message: `host ${JSON.stringify(host)} is not served here (DNS-rebinding protection); add it to the allowed hosts, or call with a client key`,
        };
      }
    }
    const changesState = !SAFE_METHODS.has(request.method.toUpperCase());
    if (request.upgrade || (ambient && changesState)) {
      const origin = first(headers.origin);
      if (!this.originAllowed(origin, host)) {
        return {
          status: 403,
          code: 'forbidden',
          message: `requests from origin ${JSON.stringify(origin)} are not allowed here; add it to the allowed origins to allow it`,
        };
      }
      // A browser on another site says so even where Origin is missing (some navigations).
      if (origin === undefined && first(headers['sec-fetch-site']) === 'cross-site' && !this.origins.has('*')) {
        return { status: 403, code: 'forbidden', message: 'cross-site requests are not allowed here' };
      }
    }
    if (ambient && changesState && !request.upgrade && hasBody(headers)) {
      const type = (first(headers['content-type']) ?? '').split(';')[0]!.trim().toLowerCase();
      const json = /^application\/([\w.-]+\+)?json$/.test(type);
      const multipart = request.multipart === true && type === 'multipart/form-data';
      const also = request.alsoAccepts?.includes(type) === true && !CROSS_SITE_SENDABLE.has(type);
      if (!json && !multipart && !also) {
        const message = `send the body as application/json${request.multipart ? ' (or multipart/form-data for uploads)' : ''}`;
        return { status: 415, code: 'unsupported_media_type', message, details: fieldDetail('content-type', message) };
      }
    }
    return undefined;
  }
}

/**
 * A warning sink that passes at most one message per interval: the headers that trigger a warning (forwarding
 * headers from an untrusted peer) are any client's to send, so the log must not grow with them.
 */
export function rateLimitedWarning(
  warn: (message: string) => void,
  intervalMs = 60_000,
  now: () => number = Date.now,
): (message: string) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (message) => {
    const at = now();
    if (at - last < intervalMs) return;
    last = at;
    warn(message);
  };
}

/** The warning logged when a forwarded request from an untrusted peer is treated as remote. */
export function untrustedForwardWarning(peer: string | undefined): string {
  return `a request forwarded by ${peer ?? 'an unknown peer'} (X-Forwarded-For, Forwarded or X-Real-IP) counts as remote: that peer is not a trusted proxy`;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = first(headers['content-length']);
  return length !== undefined && length !== '0';
}

function normalizeAddress(address: string): string {
  const trimmed = address
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  return trimmed.startsWith('::ffff:') && trimmed.includes('.') ? trimmed.slice(7) : trimmed;
}
