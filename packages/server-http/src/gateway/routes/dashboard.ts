/**
 * @module dashboardRoutes
 * `/dashboard`: the same rules as the management API (hidden without a
 * secret key, local only unless allowed, lockout after wrong keys), with a
 * sign-in form that opens an HttpOnly, SameSite=Strict session cookie so the
 * page can call the operations API. The sign-in pages (`/v0/oauth/{flow}`)
 * share the form: it returns to the page it came from, when that is one of
 * them (never to an arbitrary URL). The form takes posts from the gateway's
 * own pages only (`Origin`, or `Sec-Fetch-Site` where a browser sent no
 * `Origin`): another site's page cannot spend the lockout's failures. The
 * cookie is `Secure` when the request came over TLS (a trusted proxy's
 * `X-Forwarded-Proto: https`).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { type AccessPolicy, respondError } from '@switchyard/http-kit';
import type { Context } from 'hono';
import {
  cameOverTls,
  type ManagementGuard,
  presentedManagementKey,
  SESSION_COOKIE,
  type SessionStore,
  sessionToken,
} from '../../controlPlane/managementAuth.js';
import { dashboardPage } from '../pages/dashboard/page.js';
import { homePage } from '../pages/home.js';
import { loginPage } from '../pages/login.js';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';

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
export function pageAccess(
  gateway: Pick<GatewayParts, 'config' | 'scheduler' | 'observability' | 'access'>,
  guard: Guard,
  sessions: SessionStore,
) {
  const remote = () => gateway.config()['remote-management'];
  const incoming = (c: Context) => (c.env as { incoming: IncomingMessage }).incoming;
  return {
    incoming,
    /** The refusal that comes before any key, or undefined. */
    gate(c: Context): Response | undefined {
      if (remote()['secret-key'].length === 0) return respondError(c, 'not_found', `no route for ${c.req.method} ${c.req.path}`);
      if (!remote()['allow-remote'] && !guard.isLocal(incoming(c))) {
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

const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** Why a form post must be refused as another site's, or undefined when it came from the gateway's own page (or no browser). */
export function crossSiteForm(policy: AccessPolicy, headers: IncomingHttpHeaders): string | undefined {
  const origin = one(headers.origin);
  const site = one(headers['sec-fetch-site']);
  // The pages send `Referrer-Policy: no-referrer`, under which a browser posts their forms with `Origin: null`;
  // `Sec-Fetch-Site` still tells the gateway's own page from another's.
  if (origin === 'null' && site === 'same-origin') return undefined;
  if (!policy.originAllowed(origin, one(headers.host))) {
    return `posts from origin ${JSON.stringify(origin)} are not accepted here; sign in from the gateway's own page (or add the origin to allowed-origins)`;
  }
  if (origin === undefined && site === 'cross-site') return 'cross-site posts are not accepted here';
  return undefined;
}

/** The session cookie's attributes: `Secure` when the browser reached the gateway over TLS. */
function cookieAttributes(
  gateway: Pick<GatewayParts, 'config' | 'scheduler' | 'observability' | 'access'>,
  req: IncomingMessage,
  maxAgeSeconds: number,
): string {
  const secure = cameOverTls(req, gateway.config()['remote-management']['trusted-proxies']) ? '; Secure' : '';
  return `HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secure}`;
}

/** Registers the dashboard and its sign-in. */
export function registerDashboardRoutes(
  app: ControlPlaneApp,
  gateway: Pick<GatewayParts, 'config' | 'scheduler' | 'observability' | 'access'>,
  guard: Guard,
  sessions: SessionStore,
): void {
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
    // Before the body is read or a failure counted: another site's page must not spend this address's lockout.
    const crossSite = crossSiteForm(gateway.access, access.incoming(c).headers);
    if (crossSite) return respondError(c, 'forbidden', crossSite);
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
    c.header(
      'set-cookie',
      `${SESSION_COOKIE}=${token}; ${cookieAttributes(gateway, access.incoming(c), Math.floor(sessions.ttlMs / 1000))}`,
    );
    return c.redirect(next, 303);
  });

  app.post('/dashboard/logout', (c) => {
    const crossSite = crossSiteForm(gateway.access, access.incoming(c).headers);
    if (crossSite) return respondError(c, 'forbidden', crossSite);
    sessions.revoke(sessionToken(access.incoming(c).headers.cookie));
    c.header('set-cookie', `${SESSION_COOKIE}=; ${cookieAttributes(gateway, access.incoming(c), 0)}`);
    return c.redirect('/dashboard', 303);
  });
}
