/**
 * @module dashboardRoutes
 * `/dashboard`: the same rules as the management API (hidden without a
 * secret key, local only unless allowed, lockout after wrong keys), with a
 * sign-in form that opens an HttpOnly, SameSite=Strict session cookie so the
 * page can call the operations API.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { respondError } from '../../controlPlane/apiError.js';
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
import { dashboardPage } from '../pages/dashboard.js';
import { loginPage } from '../pages/login.js';

type Guard = ManagementGuard;

function html(c: Context, rendered: { html: string; csp: string }, status: 200 | 400 | 401 | 429, headers: Record<string, string> = {}) {
  return c.body(rendered.html, status, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': rendered.csp,
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    ...headers,
  });
}

/** Registers the dashboard and its sign-in. */
export function registerDashboardRoutes(app: ControlPlaneApp, gateway: Gateway, guard: Guard, sessions: SessionStore): void {
  const remote = () => gateway.config()['remote-management'];
  const incoming = (c: Context) => (c.env as { incoming: IncomingMessage }).incoming;
  /** The checks that come before any key: hidden, then local-only. */
  const gate = (c: Context) => {
    if (remote()['secret-key'].length === 0) return respondError(c, 'not_found', `no route for ${c.req.method} ${c.req.path}`);
    if (!remote()['allow-remote'] && !isLoopback(guard.address(incoming(c)))) {
      return respondError(c, 'forbidden', 'remote management is disabled (remote-management.allow-remote is false)');
    }
    return undefined;
  };

  app.get('/dashboard', (c) => {
    const refused = gate(c);
    if (refused) return refused;
    const req = incoming(c);
    if (sessions.valid(sessionToken(req.headers.cookie))) return html(c, dashboardPage(), 200);
    const key = presentedManagementKey(req.headers);
    if (key && guard.checkKey(guard.address(req), key) === 'ok') return html(c, dashboardPage(), 200);
    return html(c, loginPage(), 401);
  });

  app.post('/dashboard/login', async (c) => {
    const refused = gate(c);
    if (refused) return refused;
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const key = typeof form.key === 'string' ? form.key : undefined;
    const address = guard.address(incoming(c));
    const result = guard.checkKey(address, key);
    if (result === 'locked') {
      const until = guard.lockedOut(address) ?? gateway.scheduler.now();
      const seconds = Math.max(1, Math.ceil((until - gateway.scheduler.now()) / 1000));
      return html(c, loginPage(`Too many wrong keys from this address. Try again in ${Math.ceil(seconds / 60)} minutes.`), 429, {
        'retry-after': String(seconds),
      });
    }
    if (result === 'missing') return html(c, loginPage('Enter the management key.'), 400);
    if (result === 'wrong') return html(c, loginPage('That is not the management key.'), 401);
    const token = sessions.create();
    c.header('set-cookie', `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(sessions.ttlMs / 1000)}`);
    return c.redirect('/dashboard', 303);
  });

  app.post('/dashboard/logout', (c) => {
    sessions.revoke(sessionToken(incoming(c).headers.cookie));
    c.header('set-cookie', `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`);
    return c.redirect('/dashboard', 303);
  });
}
