/**
 * @module allowedMethods
 * Which methods a Hono app serves at a path, so that a request with the
 * wrong method gets 405 with `Allow` rather than 404. The answer comes from
 * the app's own registered routes, matched by a Hono router with Hono's own
 * pattern rules, so no route is listed twice and a new route is covered the
 * moment it is registered.
 */
import type { Hono, NotFoundHandler } from 'hono';
import { TrieRouter } from 'hono/router/trie-router';
import { respondError } from './apiError.js';

/** Middleware (`app.use`) is registered under this method: it serves nothing by itself. */
const MIDDLEWARE_METHOD = 'ALL';

/**
 * A lookup of the methods `app` serves at a path, sorted, with `HEAD`
 * wherever there is `GET` (Hono answers HEAD with the GET route). An empty
 * list means no route has the path at all.
 *
 * @example
 * ```ts
 * const allowedAt = allowedMethods(app);
 * app.notFound((c) => {
 *   const allow = allowedAt(c.req.path);
 *   return allow.length > 0 ? c.text('wrong method', 405, { allow: allow.join(', ') }) : c.text('no route', 404);
 * });
 * ```
 */
export function allowedMethods(app: Pick<Hono, 'routes'>): (path: string) => string[] {
  let router: TrieRouter<string> | undefined;
  let indexedRoutes = -1;
  return (path) => {
    // Routes are all registered before the first request; re-index only if one came later.
    if (router === undefined || indexedRoutes !== app.routes.length) {
      router = new TrieRouter<string>();
      // Every route goes in under one method with its own method as the value, so one match finds them all.
      for (const route of app.routes) {
        if (route.method !== MIDDLEWARE_METHOD) router.add(MIDDLEWARE_METHOD, route.path, route.method.toUpperCase());
      }
      indexedRoutes = app.routes.length;
    }
    const methods = new Set(router.match(MIDDLEWARE_METHOD, path)[0].map(([method]) => method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}

/**
 * The `notFound` handler of a control-plane app: a path some route serves
 * under other methods is `405 method_not_allowed` with `Allow`, and only a
 * path no route has is `404 not_found`, both in the control plane's error
 * shape. `alsoServed` names methods middleware answers on every path (CORS
 * answers `OPTIONS`), which no route lists. Guards registered with `use`
 * run before it, so a caller they refuse learns nothing of which routes exist.
 *
 * @example
 * ```ts
 * app.notFound(methodNotAllowedOrNotFound(app));
 * ```
 */
export function methodNotAllowedOrNotFound(app: Pick<Hono, 'routes'>, alsoServed: readonly string[] = []): NotFoundHandler {
  const allowedAt = allowedMethods(app);
  return (c) => {
    const served = allowedAt(c.req.path);
    if (served.length === 0) return respondError(c, 'not_found', `no route for ${c.req.method} ${c.req.path}`);
    const allow = [...new Set([...served, ...alsoServed])].sort().join(', ');
    return respondError(c, 'method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}; use ${allow}`, undefined, { allow });
  };
}
