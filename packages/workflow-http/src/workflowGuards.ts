/**
 * @module workflowGuards
 * Checks the workflow API makes before a route runs: the API key (open
 * paths aside) and, where a route reads its body itself, the media type.
 */

import { ApiKeySet, respondError } from '@switchyard/http-kit';
import type { MiddlewareHandler } from 'hono';

/** `application/json`, or a `+json` type, with any parameters. */
export function isJsonMediaType(header: string | undefined): boolean {
  return /^application\/([\w.-]+\+)?json$/i.test((header ?? '').split(';')[0]!.trim());
}

const OPEN_PATHS = new Set(['/openapi.json', '/healthz', '/webhooks/tracker']);

/** API-key guard: constant-time comparison of SHA-256 digests; open when no key is configured. */
export function apiKeyGuard(keys: readonly string[]): MiddlewareHandler {
  const set = new ApiKeySet(keys);
  return async (c, next) => {
    if (set.open || OPEN_PATHS.has(c.req.path)) return next();
    const authorization = c.req.header('authorization');
    const key = authorization?.toLowerCase().startsWith('bearer ') ? authorization.slice(7).trim() : c.req.header('x-api-key')?.trim();
    if (!set.accepts(key)) {
      return respondError(c, 'unauthorized', key ? 'wrong API key' : 'missing API key (Authorization: Bearer or X-API-Key)', undefined, {
        'www-authenticate': 'Bearer',
      });
    }
    await next();
  };
}
