/**
 * @module upgradeGate
 * Which websocket upgrades go through, decided before the handshake so a
 * refused client gets a plain HTTP answer (a JSON body in OpenAI's error
 * shape) and a closed socket, never an open websocket. In order: the
 * protocol (400 for an upgrade to anything but `websocket`, for callers
 * that hand every upgrade here; the gateway serves those as plain HTTP
 * first, with `serveWithoutUpgrade`), the route (404 for any other path),
 * the method (400 for anything but a GET), the client key of `api-keys`
 * (401, the same rule as every `/v1/*` route), the access rules (403 for a
 * cross-site `Origin` whatever authorized the upgrade, and for a key-less
 * caller a foreign `Host` or one not on this machine), and, when `X-Management-Key`
 * is given, the management API's rules (403 when management is off or the
 * client is not local, 429 while its address is locked out, 401 for a wrong
 * key, which counts toward the lockout).
 */
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { presentedKey } from '@switchyard/http-kit';
import { openAiErrorBody } from '@switchyard/translate';
import type { ManagementDecision } from '../../controlPlane/managementAuth.js';

/** The websocket routes. */
export const WEBSOCKET_ROUTES = ['/v1/ws', '/v1/responses'] as const;
/** One of {@link WEBSOCKET_ROUTES}. */
export type WebsocketRoute = (typeof WEBSOCKET_ROUTES)[number];

/** The management API's rules, as the websocket routes need them. */
export interface ManagementCheck {
  /** Every rule for a caller presenting `key` on `req` (a wrong key counts toward the lockout). */
  authorize(req: IncomingMessage, key: string): ManagementDecision;
  /** Whether `key` is still the management key (it may change while a socket is open). */
  matches(key: string): boolean;
}

/** What the gate decided. */
export type UpgradeDecision =
  | { ok: true; route: WebsocketRoute; managementKey: string | undefined }
  | {
      ok: false;
      /** The route asked for, or `other`. */
      route: WebsocketRoute | 'other';
      status: number;
      /** The metrics' and log's word for it. */
      reason: string;
      code: string;
      type: string;
      message: string;
      retryAfterSeconds?: number;
    };

/** What {@link decideUpgrade} consults. */
export interface UpgradeDeps {
  acceptsClientKey(key: string | undefined): boolean;
  management: ManagementCheck;
  /** The access rules' refusal of an upgrade, or undefined (the data plane's `accessDenial`). */
  accessDenial?(req: IncomingMessage, options: { upgrade: true }): { status: number; message: string } | undefined;
}

/** Whether a request asks to upgrade to websocket, the one protocol these routes take. */
export function isWebsocketUpgrade(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/** The management key of an upgrade: only `X-Management-Key`, since `Authorization` carries the client key. */
function managementKeyOf(req: IncomingMessage): string | undefined {
  const value = req.headers['x-management-key'];
  return typeof value === 'string' ? value.trim() : undefined;
}

const MANAGEMENT_REFUSALS = {
  not_found: { status: 403, reason: 'management_disabled', code: 'management_disabled', type: 'permission_error' },
  forbidden: { status: 403, reason: 'forbidden', code: 'forbidden', type: 'permission_error' },
  too_many_requests: { status: 429, reason: 'locked_out', code: 'too_many_requests', type: 'rate_limit_error' },
  unauthorized: { status: 401, reason: 'unauthorized_management', code: 'invalid_management_key', type: 'authentication_error' },
} as const;

/**
 * Decides an upgrade request.
 *
 * @example
 * ```ts
 * const decision = decideUpgrade(req, { acceptsClientKey: (key) => keys.accepts(key), management });
 * if (!decision.ok) refuseUpgrade(socket, decision);
 * ```
 */
export function decideUpgrade(req: IncomingMessage, deps: UpgradeDeps): UpgradeDecision {
  const path = (req.url ?? '/').split('?', 1)[0]!;
  const route = (WEBSOCKET_ROUTES as readonly string[]).includes(path) ? (path as WebsocketRoute) : undefined;
  if (!isWebsocketUpgrade(req)) {
    const upgrade = (req.headers.upgrade ?? '').toLowerCase();
    return {
      ok: false,
      route: route ?? 'other',
      status: 400,
      reason: 'bad_request',
      code: 'unsupported_upgrade',
      type: 'invalid_request_error',
      message: `upgrading to ${JSON.stringify(upgrade.slice(0, 32))} is not served; send the request without Upgrade, or upgrade to websocket on ${WEBSOCKET_ROUTES.join(' or ')}`,
    };
  }
  if (!route) {
    return {
      ok: false,
      route: 'other',
      status: 404,
      reason: 'not_found',
      code: 'not_found',
      type: 'not_found_error',
      message: `no websocket route at ${path.slice(0, 200)}; use ${WEBSOCKET_ROUTES.join(' or ')}`,
    };
  }
  const bad = (message: string): UpgradeDecision => ({
    ok: false,
    route,
    status: 400,
    reason: 'bad_request',
    code: 'invalid_request',
    type: 'invalid_request_error',
    message,
  });
  if (req.method !== 'GET') return bad(`a websocket upgrade is a GET, not ${req.method}`);
  if (!deps.acceptsClientKey(presentedKey(req.headers))) {
    return {
      ok: false,
      route,
      status: 401,
      reason: 'unauthorized',
      code: 'invalid_api_key',
      type: 'authentication_error',
      message: 'missing or invalid API key',
    };
  }
  const denial = deps.accessDenial?.(req, { upgrade: true });
  if (denial) {
    const forbidden = denial.status === 403;
    return {
      ok: false,
      route,
      status: denial.status,
      reason: forbidden ? 'forbidden' : 'bad_request',
      code: forbidden ? 'forbidden' : 'invalid_request',
      type: forbidden ? 'permission_error' : 'invalid_request_error',
      message: denial.message,
    };
  }
  const managementKey = managementKeyOf(req);
  if (managementKey === undefined || managementKey === '') return { ok: true, route, managementKey: undefined };
  const decision = deps.management.authorize(req, managementKey);
  if (decision.ok) return { ok: true, route, managementKey };
  return {
    ok: false,
    route,
    ...MANAGEMENT_REFUSALS[decision.code],
    message: decision.message,
    ...(decision.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: decision.retryAfterSeconds }),
  };
}

/** Answers a refused upgrade with a plain HTTP response and closes the socket. */
export function refuseUpgrade(socket: Duplex, refusal: Extract<UpgradeDecision, { ok: false }>, requestId: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(
    openAiErrorBody({ status: refusal.status, code: refusal.code, type: refusal.type, message: refusal.message }),
  );
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': requestId };
  if (refusal.retryAfterSeconds !== undefined) headers['retry-after'] = String(refusal.retryAfterSeconds);
  const lines = [
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}`,
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  socket.once('finish', () => socket.destroy());
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
