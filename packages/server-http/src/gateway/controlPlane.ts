/**
 * @module controlPlane
 * The gateway's Hono app: everything that is not `/v1/*`. Routes are
 * declared with `@hono/zod-openapi`, so the schemas that validate requests
 * also produce `/openapi.json`. Errors all take one shape; bad input is a
 * 400 or 422 naming the field; a handler fault is a 500 with the request id
 * and no stack trace.
 */
import { randomUUID } from 'node:crypto';
import { RoutingError } from '@switchyard/core-routing';
import {
  type AccessPolicy,
  ApiError,
  type ApiErrorCode,
  bodyCap,
  createControlPlaneApp,
  methodNotAllowedOrNotFound,
  respondError,
} from '@switchyard/http-kit';
import type { Clock } from '@switchyard/runtime';
import { HTTPException } from 'hono/http-exception';
import { managementAuth, SessionStore } from '../controlPlane/managementAuth.js';
import type { GatewayConfig } from './config/schema.js';
import type { ControlPlaneApp, ControlPlaneEnv, GatewayManagement, GatewayParts } from './parts.js';
import { registerApiCallRoute } from './routes/apiCall.js';
import { registerAuthFileRoutes } from './routes/authFiles.js';
import { registerClusterRoutes } from './routes/cluster.js';
import { credentialsApiError, registerCredentialRoutes } from './routes/credentials.js';
import { registerDashboardRoutes } from './routes/dashboard.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerManagementRoutes } from './routes/management.js';
import { registerOAuthRoutes } from './routes/oauth.js';
import { registerOperationsRoutes } from './routes/operations.js';
import { registerProviderQuotaRoute } from './routes/providerQuota.js';
import { registerUsageRoutes } from './routes/usage.js';

export type { ControlPlaneApp, ControlPlaneEnv } from './parts.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The most any control-plane request body may hold. Routes read bodies
 * whole (the sign-in form before any key is checked), so without a cap one
 * client could make the gateway buffer without bound. The largest legitimate
 * bodies are a 1 MiB config and an `/api-call` with 1 MiB of `data`, which
 * JSON-encoded UTF-8 can make about three times larger.
 */
export const CONTROL_PLANE_BODY_LIMIT = 4 * 1024 * 1024;

const ROUTING_STATUS: Partial<Record<string, ApiErrorCode>> = {
  provider_not_found: 'provider_not_found',
  invalid_argument: 'bad_request',
  invalid_config: 'validation_failed',
};

export type { GatewayManagement } from './parts.js';

/**
 * The management guard of a gateway, reading `remote-management.*` from the
 * config in force. One guard serves the management API, the dashboard and
 * the websocket routes, so a lockout earned on one applies to all.
 *
 * @example
 * ```ts
 * const management = createGatewayManagement(() => gateway.config(), gateway.scheduler);
 * ```
 */
export function createGatewayManagement(
  config: () => GatewayConfig,
  clock: Clock,
  hooks: { access?: () => AccessPolicy; onUntrustedForward?: (peer: string) => void } = {},
): GatewayManagement {
  const remote = () => config()['remote-management'];
  const sessions = new SessionStore({ clock });
  const guard = managementAuth({
    sessions,
    ...(hooks.access ? { access: hooks.access } : {}),
    ...(hooks.onUntrustedForward ? { onUntrustedForward: hooks.onUntrustedForward } : {}),
    secretKey: () => remote()['secret-key'],
    allowRemote: () => remote()['allow-remote'],
    trustedProxies: () => remote()['trusted-proxies'],
    maxFailures: remote()['max-failures'],
    lockoutMs: remote()['lockout-duration'],
    clock,
  });
  return { guard, sessions };
}

/**
 * Builds the control plane for a gateway.
 *
 * @example
 * ```ts
 * const app = createControlPlane(gateway, gateway.management);
 * const listener = getRequestListener(app.fetch);
 * ```
 */
export function createControlPlane(gateway: GatewayParts, management: GatewayManagement): ControlPlaneApp {
  const app: ControlPlaneApp = createControlPlaneApp<ControlPlaneEnv>();

  app.use('*', async (c, next) => {
    const given = c.req.header('x-request-id');
    const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
    c.set('requestId', requestId);
    c.header('x-request-id', requestId);
    await next();
  });

  app.onError((error, c) => {
    if (error instanceof ApiError) return respondError(c, error.code, error.message, error.details, error.headers);
    const credentialsError = credentialsApiError(error);
    if (credentialsError) return respondError(c, credentialsError.code, credentialsError.message, credentialsError.details);
    if (error instanceof RoutingError) {
      const code = ROUTING_STATUS[error.code];
      if (code) return respondError(c, code, error.message);
    }
    if (error instanceof HTTPException) {
      // Hono raises these for bodies it cannot read (malformed JSON) and for oversized ones.
      if (error.status === 400) return respondError(c, 'bad_request', 'the request body is not valid JSON');
      if (error.status === 413) return respondError(c, 'payload_too_large', error.message);
      if (error.status === 415) return respondError(c, 'unsupported_media_type', 'send the body as application/json');
      return respondError(c, error.status >= 500 ? 'internal' : 'bad_request', error.message);
    }
    const requestId = c.get('requestId');
    gateway.observability.logger.error({ err: error, request_id: requestId, path: c.req.path }, 'control_plane_handler_failed');
    return respondError(c, 'internal', 'internal error', { request_id: requestId });
  });

  // A path served under other methods is 405 with `Allow`; only a path no route has is 404.
  // The management guard runs first, so a caller without the key learns nothing of which routes exist.
  app.notFound(methodNotAllowedOrNotFound(app));

  const { guard, sessions } = management;
  app.use('/v0/management/*', guard.middleware);
  app.use('/v0/operations/*', guard.middleware);
  // A body of declared length is judged by its header alone, so a route that leaves it unread keeps the connection.
  // The cap comes after the guard: a chunked body is read to be measured, and a caller without the key gets its
  // 401 first, before any of it is read (and, with `Expect: 100-continue`, before it is sent).
  app.use('*', bodyCap(CONTROL_PLANE_BODY_LIMIT, `the request body must be at most ${CONTROL_PLANE_BODY_LIMIT} bytes`));
  // Credential events published by management calls say who and which request caused them.
  app.use('/v0/management/*', async (c, next) => {
    const cluster = gateway.cluster;
    if (!cluster || c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const correlation = { request_id: c.get('requestId'), actor: 'management-api', reason: `${c.req.method} ${c.req.path}`.slice(0, 200) };
    return cluster.withCorrelation(correlation, () => next());
  });

  registerHealthRoutes(app, gateway);
  registerOperationsRoutes(app, gateway);
  registerClusterRoutes(app, gateway);
  registerManagementRoutes(app, gateway);
  registerDashboardRoutes(app, gateway, guard, sessions);
  registerCredentialRoutes(app, gateway);
  registerAuthFileRoutes(app, gateway);
  registerApiCallRoute(app, gateway);
  registerOAuthRoutes(app, gateway, guard, sessions);
  registerProviderQuotaRoute(app, gateway);
  registerUsageRoutes(app, gateway);

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Switchyard gateway control plane',
      version: '0.1.0',
      description:
        'Management (`/v0/management`), operations (`/v0/operations`) and device sign-in (`/v0/oauth`) APIs of the Switchyard gateway. All need the management key (`Authorization: Bearer` or `X-Management-Key`). Errors are `{"error": {"code", "message", "details"?}}`. A method a path does not serve is `405 method_not_allowed`, with `Allow` listing the methods it does.',
    },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'managementKey', { type: 'http', scheme: 'bearer' });
  return app;
}
