/**
 * @module oauth (routes)
 * Device sign-in over HTTP, thin over the credential manager's sign-in
 * sessions: `POST /v0/oauth/{flow}/sessions` starts one and answers the
 * user code and verification URI; `GET /v0/oauth/sessions/{id}` tells how
 * it stands; `DELETE` cancels it. Both answer for a sign-in another node of
 * a cluster runs, through the shared sign-in directory. On success the manager stores the
 * credential in auth-dir like any other, and it serves traffic at once.
 * The JSON routes follow the management rules (the guard runs first);
 * `GET /v0/oauth/{flow}` is the page a person uses, behind the same
 * sign-in form as the dashboard.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { CredentialsError, type SignInSession } from '@switchyard/credentials';
import { ApiError, fieldDetails } from '@switchyard/http-kit';
import type { Context, MiddlewareHandler } from 'hono';
import { html as markup } from 'hono/html';
import type { SessionStore } from '../../controlPlane/managementAuth.js';
import { signInRequest } from '../flows.js';
import { page } from '../pages/layout.js';
import { loginPage } from '../pages/login.js';
import { signInPage } from '../pages/signIn.js';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { type Guard, html, pageAccess } from './dashboard.js';
import { ErrorSchema, jsonResponse, protectedErrors } from './schemas.js';

const tags = ['sign-in'];
const security = [{ managementKey: [] }];

const FlowPath = z.object({
  flow: z
    .string()
    .min(1)
    .openapi({ param: { name: 'flow', in: 'path' }, example: 'cloud-coding-assistant' }),
});
const SessionPath = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

/** The body of a sign-in start, for `/openapi.json`; the flow's kind decides which fields it takes. */
const StartBody = z
  .object({
    mode: z.enum(['builder-id', 'identity-center']).optional().openapi({ description: 'cloud-coding-assistant flows only' }),
    start_url: z.string().optional().openapi({ description: 'identity-center: your https start URL' }),
    region: z.string().optional().openapi({ description: 'identity-center: the region, e.g. eu-central-1' }),
    priority: z.number().int().optional().openapi({ description: "The new credential's priority" }),
  })
  .openapi('SignInStart');

const StartedSchema = z
  .object({
    session_id: z.string(),
    flow: z.string(),
    user_code: z.string(),
    verification_uri: z.string(),
    verification_uri_complete: z.string().optional(),
    expires_at: z.string(),
    /** Seconds between polls of the authorization server. */
    interval: z.number(),
  })
  .openapi('SignInStarted');

const StatusSchema = z
  .object({
    session_id: z.string(),
    flow: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed', 'expired']),
    expires_at: z.string(),
    credential_id: z.string().optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  })
  .openapi('SignInStatus');

/** A session as the API shows it: an expired device code is its own status; a cancelled sign-in failed with code `cancelled`. */
export function sessionStatus(session: SignInSession): z.infer<typeof StatusSchema> {
  const base = { session_id: session.id, flow: session.flow, expires_at: session.prompt.expires_at };
  switch (session.state) {
    case 'pending':
      return { ...base, status: 'pending' };
    case 'succeeded':
      return { ...base, status: 'succeeded', ...(session.credential_id ? { credential_id: session.credential_id } : {}) };
    case 'cancelled':
      return { ...base, status: 'failed', error: { code: 'cancelled', message: 'the sign-in was cancelled' } };
    case 'failed': {
      const error = session.error ?? { code: 'authorization_failed', message: 'the sign-in failed' };
      return { ...base, status: error.code === 'expired_token' ? 'expired' : 'failed', error };
    }
  }
}

/** The sign-in's JSON paths, which the management guard protects (the page at `/v0/oauth/{flow}` has its own check). */
const API_PATH = /^\/v0\/oauth(\/(sessions\/[^/]+|[^/]+\/sessions))?\/?$/;

/** Registers the sign-in API and pages. */
export function registerOAuthRoutes(
  app: ControlPlaneApp,
  gateway: Pick<GatewayParts, 'config' | 'scheduler' | 'observability' | 'credentials' | 'access'>,
  guard: Guard,
  sessions: SessionStore,
): void {
  const manager = () => gateway.credentials.manager;
  const access = pageAccess(gateway, guard, sessions);
  const guarded: MiddlewareHandler = (c, next) => (API_PATH.test(c.req.path) ? guard.middleware(c, next) : next());
  app.use('/v0/oauth/*', guarded);
  app.use('/v0/oauth', guarded);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/oauth',
      tags,
      security,
      summary: 'The sign-in flows this gateway offers: each name (its page is /v0/oauth/{name}) and kind',
      responses: {
        200: jsonResponse(
          z.object({ flows: z.array(z.object({ name: z.string(), kind: z.string(), page: z.string() })) }),
          'The flows, by name',
        ),
        ...protectedErrors,
      },
    }),
    (c) =>
      c.json(
        {
          flows: manager()
            .flowNames()
            .flatMap((name) => {
              const kind = gateway.credentials.flowKinds.get(name);
              return kind ? [{ name, kind, page: `/v0/oauth/${encodeURIComponent(name)}` }] : [];
            }),
        },
        200,
      ),
  );

  const kindOf = (flow: string) => {
    const kind = gateway.credentials.flowKinds.get(flow);
    if (!kind || !manager().flowNames().includes(flow)) {
      throw new ApiError('flow_not_found', `no sign-in flow is named ${JSON.stringify(flow)}`, {
        details: { flows: manager().flowNames() },
      });
    }
    return kind;
  };
  /** The answer of `lookup`, with an unknown id as `session_not_found`. */
  const session = async (lookup: Promise<SignInSession>): Promise<SignInSession> => {
    try {
      return await lookup;
    } catch (error) {
      if (error instanceof CredentialsError && error.code === 'invalid_argument') throw new ApiError('session_not_found', error.message);
      throw error;
    }
  };

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v0/oauth/{flow}/sessions',
      tags,
      security,
      summary: 'Start a device sign-in: answers the user code and the verification URI to show',
      request: { params: FlowPath, body: { required: false, content: { 'application/json': { schema: StartBody } } } },
      responses: {
        201: jsonResponse(StartedSchema, 'The sign-in, waiting for the user'),
        422: jsonResponse(ErrorSchema, 'Invalid options; `details` names the fields'),
        502: jsonResponse(ErrorSchema, 'The authorization server refused or did not answer'),
        ...protectedErrors,
      },
    }),
    async (c) => {
      const { flow } = c.req.valid('param');
      const kind = kindOf(flow);
      const body = await optionalJson(c);
      const parsed = signInRequest(kind, body);
      if ('issues' in parsed) {
        const first = parsed.issues[0]!;
        throw new ApiError('validation_failed', `${first.field}: ${first.message}`, { details: fieldDetails(parsed.issues) });
      }
      const { options, priority } = parsed.request;
      const started = await manager().signIns.start(flow, options, priority === undefined ? {} : { priority });
      const prompt = started.prompt;
      return c.json(
        {
          session_id: started.id,
          flow: started.flow,
          user_code: prompt.user_code,
          verification_uri: prompt.verification_uri,
          ...(prompt.verification_uri_complete ? { verification_uri_complete: prompt.verification_uri_complete } : {}),
          expires_at: prompt.expires_at,
          interval: prompt.interval_ms / 1000,
        },
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/oauth/sessions/{id}',
      tags,
      security,
      summary: 'How a sign-in stands: pending, succeeded (with the credential id), failed or expired',
      request: { params: SessionPath },
      responses: { 200: jsonResponse(StatusSchema, 'Its status'), ...protectedErrors },
    }),
    // In a cluster, a sign-in another node runs is answered from the shared directory.
    async (c) => c.json(sessionStatus(await session(manager().signIns.status(c.req.valid('param').id))), 200),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v0/oauth/sessions/{id}',
      tags,
      security,
      summary: 'Cancel a sign-in (a finished one is left as it ended)',
      request: { params: SessionPath },
      responses: { 200: jsonResponse(StatusSchema, 'Its status after the cancel'), ...protectedErrors },
    }),
    // Answers the state the sign-in ends in; one another node runs is asked to stop and waited for (up to 5 s).
    async (c) => c.json(sessionStatus(await session(manager().signIns.cancelAnywhere(c.req.valid('param').id))), 200),
  );

  app.get('/v0/oauth/:flow', (c) => {
    const refused = access.gate(c);
    if (refused) return refused;
    const flow = c.req.param('flow');
    // The key comes first: the list of flows is for signed-in operators only.
    if (!access.signedIn(c)) return html(c, loginPage(undefined, `/v0/oauth/${flow}`), 401);
    const kind = gateway.credentials.flowKinds.get(flow);
    if (!kind || !manager().flowNames().includes(flow)) return html(c, unknownFlowPage(flow, manager().flowNames()), 404);
    return html(c, signInPage({ flow, kind }), 200);
  });
}

/** The JSON body, or `{}` when there is none (a flow without options needs no body). */
async function optionalJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('bad_request', 'the request body is not valid JSON');
  }
}

function unknownFlowPage(flow: string, flows: readonly string[]) {
  const links = flows.map((name) => markup`<li><a href="/v0/oauth/${encodeURIComponent(name)}">${name}</a></li>`);
  return page({
    title: 'Switchyard: no such sign-in',
    body: markup`<main><section class="login" aria-labelledby="title">
<h1 id="title">No such sign-in</h1>
<p role="alert">This gateway has no sign-in flow named <code>${flow}</code>.</p>
${flows.length ? markup`<p>Its flows:</p><ul>${links}</ul>` : ''}
</section></main>`,
  });
}
