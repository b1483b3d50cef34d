/**
 * @module dashboardRoutes
 * `/dashboard`: the same rules as the management API (hidden without a
 * secret key, local only unless allowed, lockout after wrong keys), with a
 * sign-in form that opens an HttpOnly, SameSite=Strict session cookie so the
 * page can call the operations API. The sign-in pages (`/v0/oauth/{flow}`)
 * share the form: it returns to the page it came from, when that is one of
 * them (never to an arbitrary URL).
 */
import type { IncomingMessage } from 'node:http';
import { respondError } from '@switchyard/http-kit';
import type { Context } from 'hono';
import {
  isLoopback,
  type ManagementGuard,
  presentedManagementKey,
  SESSION_COOKIE,
  type SessionStore,
  sessionToken,
} from '../../controlPlane/managementAuth.js';
import type { ControlPlaneApp } from '../controlPlane.js';
import type { Gateway } from '../gateway.js';
import { dashboardPage, homePage } from '../pages/dashboard.js';
import { loginPage } from '../pages/login.js';

/** The management guard. */
export type Guard = ManagementGuard;

/** Pages the sign-in form may return to besides the dashboard. */
const RETURN_PATH = /^\/v0\/oauth\/[a-z0-9][a-z0-9._-]*$/;

/** Where the sign-in form returns: a sign-in page it came from, else the dashboard. */
function returnPath(next: unknown): string {
  return typeof next === 'string' && RETURN_PATH.test(next) ? next : '/dashboard';
}

/** A gateway page, with the headers every one of them carries. */
export function html(
  c: Context,
  rendered: { html: string; csp: string },
  status: 200 | 400 | 401 | 404 | 429,
  headers: Record<string, string> = {},
) {
  return c.body(rendered.html, status, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': rendered.csp,
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    ...headers,
  });
}

/**
 * What the management pages check before showing anything: hidden without a
 * secret key (404), local only unless allowed (403); then whether the
 * browser has a session (or presents the key in a header).
 */
export function pageAccess(gateway: Gateway, guard: Guard, sessions: SessionStore) {
  const remote = () => gateway.config()['remote-management'];
  const incoming = (c: Context) => (c.env as { incoming: IncomingMessage }).incoming;
  return {
    incoming,
    /** The refusal that comes before any key, or undefined. */
    gate(c: Context): Response | undefined {
      if (remote()['secret-key'].length === 0) return respondError(c, 'not_found', `no route for ${c.req.method} ${c.req.path}`);
      if (!remote()['allow-remote'] && !isLoopback(guard.address(incoming(c)))) {
        return respondError(c, 'forbidden', 'remote management is disabled (remote-management.allow-remote is false)');
      }
      return undefined;
    },
    /** Whether the request carries a live session or the right key. */
    signedIn(c: Context): boolean {
      const req = incoming(c);
      if (sessions.valid(sessionToken(req.headers.cookie))) return true;
      const key = presentedManagementKey(req.headers);
      return key !== undefined && guard.checkKey(guard.address(req), key) === 'ok';
    },
  };
}

/** Registers the dashboard and its sign-in. */
export function registerDashboardRoutes(app: ControlPlaneApp, gateway: Gateway, guard: Guard, sessions: SessionStore): void {
  const access = pageAccess(gateway, guard, sessions);

  // The gateway's address opened in a browser: a page of links, not a JSON 404. It holds nothing secret.
  app.get('/', (c) => {
    const config = gateway.config();
    const origin = new URL(c.req.url).origin;
    let metricsUrl: string | null = null;
    if (config.metrics.enabled) {
      const port = gateway.observability.metricsServer?.address()?.port ?? config.metrics.port;
      const wildcard = ['0.0.0.0', '::', ''].includes(config.metrics.host);
      // A metrics listener on every interface is reached by the name this page was; one on an address, by that address.
      const host = wildcard ? new URL(origin).hostname : config.metrics.host;
      metricsUrl = `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}${config.metrics.path}`;
    }
    return html(c, homePage({ dashboard: config['remote-management']['secret-key'] !== '', metricsUrl, apiBase: `${origin}/v1` }), 200);
  });

  app.get('/dashboard', (c) => {
    const refused = access.gate(c);
    if (refused) return refused;
    return access.signedIn(c) ? html(c, dashboardPage(), 200) : html(c, loginPage(), 401);
  });

  app.post('/dashboard/login', async (c) => {
    const refused = access.gate(c);
    if (refused) return refused;
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const key = typeof form.key === 'string' ? form.key : undefined;
    const next = returnPath(form.next);
    const address = guard.address(access.incoming(c));
    const result = guard.checkKey(address, key);
    if (result === 'locked') {
      const until = guard.lockedOut(address) ?? gateway.scheduler.now();
      const seconds = Math.max(1, Math.ceil((until - gateway.scheduler.now()) / 1000));
      return html(c, loginPage(`Too many wrong keys from this address. Try again in ${Math.ceil(seconds / 60)} minutes.`, next), 429, {
        'retry-after': String(seconds),
      });
    }
    if (result === 'missing') return html(c, loginPage('Enter the management key.', next), 400);
    if (result === 'wrong') return html(c, loginPage('That is not the management key.', next), 401);
    const token = sessions.create();
    c.header('set-cookie', `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(sessions.ttlMs / 1000)}`);
    return c.redirect(next, 303);
  });

  app.post('/dashboard/logout', (c) => {
    sessions.revoke(sessionToken(access.incoming(c).headers.cookie));
    c.header('set-cookie', `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`);
    return c.redirect('/dashboard', 303);
  });
}
