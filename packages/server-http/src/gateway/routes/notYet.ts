/**
 * @module notYet
 * Documented gateway routes this version does not serve yet. They answer
 * 501 `not_implemented` (behind the management key, like their finished
 * neighbours) instead of a bare 404, so a client learns the route is known
 * and missing rather than misspelt. Each line goes when its route lands.
 */
import { respondError } from '../../controlPlane/apiError.js';
import type { ControlPlaneApp } from '../controlPlane.js';

/** Path patterns (Hono syntax) of documented routes still to come. */
export const NOT_YET_SERVED = ['/v0/management/api-call', '/v0/oauth/*'] as const;

export function registerNotYetServedRoutes(app: ControlPlaneApp): void {
  for (const path of NOT_YET_SERVED) {
    app.all(path, (c) =>
      respondError(c, 'not_implemented', `${c.req.method} ${c.req.path} is documented but not served by this version of the gateway`),
    );
  }
}
