/**
 * @module workflowGuards
 * Checks the workflow API makes before a route runs: who the caller is (a
 * client key, a webhook signature, or a key-less caller on this machine),
 * the shared access policy (Host, Origin, content type, forwarded headers),
 * and, where a route reads its body itself, the media type.
 */

import type { IncomingMessage } from 'node:http';
import {
  AccessPolicy,
  type AccessPolicyOptions,
  ApiKeySet,
  type ClientKeyEntry,
  type KeyIdentity,
  rateLimitedWarning,
  respondError,
  untrustedForwardWarning,
} from '@switchyard/http-kit';
import type { MiddlewareHandler } from 'hono';

/** `application/json`, or a `+json` type, with any parameters. */
export function isJsonMediaType(header: string | undefined): boolean {
  return /^application\/([\w.-]+\+)?json$/i.test((header ?? '').split(';')[0]!.trim());
}

/** Paths anyone may read: the API description and the health check. */
const OPEN_PATHS = new Set(['/openapi.json', '/healthz']);
/** Paths that authenticate by their own signature. */
const SIGNED_PATHS = new Set(['/webhooks/tracker']);

/** The variables the guard sets for the routes. */
export interface CallerVariables {
  /** The key's holder; undefined for a key-less caller on this machine (who acts as the server's actor). */
  caller: KeyIdentity | undefined;
}

/**
 * The workflow API's guard. With keys configured, every path but the open and signed ones needs one (constant-time
 * comparison). Without keys, only callers on this machine are served, and the access policy keeps web pages out:
 * a foreign `Host` (DNS rebinding), a cross-origin state change, and a form-encoded body are refused.
 */
export function accessGuard(
  keys: readonly ClientKeyEntry[],
  access: AccessPolicyOptions,
  onWarning: (message: string) => void = () => undefined,
  remoteCallers = false,
): MiddlewareHandler<{ Variables: CallerVariables }> {
  const set = new ApiKeySet(keys);
  // `insecure` on a public bind serves anyone who reaches it, by whatever name, as the gateway does.
  const policy = new AccessPolicy(remoteCallers && !access.allowedHosts?.length ? { ...access, allowedHosts: ['*'] } : access);
  const warn = rateLimitedWarning(onWarning);
  return async (c, next) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    // Embedded (`app.request`, another runtime): the request's own URL names the host it was sent to.
    const headers = incoming?.headers ?? { host: new URL(c.req.url).host, ...Object.fromEntries(c.req.raw.headers) };
    const path = c.req.path;
    const signed = SIGNED_PATHS.has(path);
    let caller: KeyIdentity | undefined;
    if (!set.open && !OPEN_PATHS.has(path) && !signed) {
      const authorization = c.req.header('authorization');
      const key = authorization?.toLowerCase().startsWith('bearer ') ? authorization.slice(7).trim() : c.req.header('x-api-key')?.trim();
      caller = set.identify(key);
      if (!caller) {
        return respondError(c, 'unauthorized', key ? 'wrong API key' : 'missing API key (Authorization: Bearer or X-API-Key)', undefined, {
          'www-authenticate': 'Bearer',
        });
      }
    }
    if (
      set.open &&
      !remoteCallers &&
      !OPEN_PATHS.has(path) &&
      !signed &&
      incoming &&
      !policy.callerIsLocal(incoming.socket.remoteAddress, headers)
    ) {
      // A forwarded request (a reverse proxy on this host) or a remote peer: without keys, nobody but this machine.
      const peer = incoming.socket.remoteAddress;
      if (policy.forwardedByUntrustedPeer(peer, headers)) warn(untrustedForwardWarning(peer));
      return respondError(
        c,
        'forbidden',
        'this server has no API keys, so it serves only callers on this machine; set api_keys to serve others',
      );
    }
    const refusal = policy.check({ method: c.req.method, headers, authorization: caller ? 'key' : signed ? 'signature' : 'loopback' });
    if (refusal) return respondError(c, refusal.code, refusal.message, refusal.details);
    c.set('caller', caller);
    await next();
  };
}
