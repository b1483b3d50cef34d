/**
 * @module workflowApi
 * The workflow HTTP adapter on Hono with `@hono/zod-openapi`: features,
 * transitions (409 with violations when a gate refuses, 422 naming the
 * field on bad input), the audit trail with verification, work packages,
 * governance checks, agent jobs, the dispatch tool, signed tracker
 * webhooks and `/metrics`, all described in `/openapi.json`. Optional API
 * keys (`Authorization: Bearer` or `X-API-Key`) are compared in constant
 * time. The routes translate; `@switchyard/workflow` decides.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  type AccessPolicyOptions,
  ApiError,
  ApiKeySet,
  bodyCap,
  type ClientKeyEntry,
  createControlPlaneApp,
  methodNotAllowedOrNotFound,
  respondError,
} from '@switchyard/http-kit';
import {
  type AgentDispatcher,
  type DispatchTool,
  FEATURE_STATES,
  type FeatureTransitionResult,
  JOB_STATES,
  type SyncEngine,
  type Workflow,
  WorkflowError,
  type WorkPackageTransitionResult,
} from '@switchyard/workflow';
import { JSON_ONLY, respondWorkflowError } from './workflowErrors.js';
import { accessGuard, type CallerVariables, isJsonMediaType } from './workflowGuards.js';
import * as s from './workflowSchemas.js';

/** Where `/metrics` comes from (a prom-client `Registry`, e.g. `createObservability(...).registry`). */
export interface MetricsSource {
  contentType: string;
  metrics(): Promise<string>;
}

/** Options of {@link createWorkflowApi}. */
export interface WorkflowApiOptions {
  workflow: Workflow;
  /** Starts and cancels agent jobs (`POST /jobs`); jobs are listed from the store either way. */
  dispatcher?: AgentDispatcher;
  /** Tracker sync; `POST /webhooks/tracker` needs it with a webhook secret. */
  sync?: SyncEngine;
  /** The dispatch tool (`POST /dispatch`). */
  dispatchTool?: DispatchTool;
  metrics?: MetricsSource;
  /**
   * Client keys (a key, or `{key, name, admin}`): a caller's key name is the actor its dispatched subcommands are
   * recorded under. When empty or absent, only callers on this machine are served, as the server's own actor.
   * Webhooks authenticate by signature instead.
   */
  apiKeys?: readonly ClientKeyEntry[];
  /** Host names, origins and trusted proxies of the shared access policy (default: a loopback server). */
  access?: AccessPolicyOptions;
  /** Serve key-less callers that are not on this machine (`insecure` on a public bind); default false. */
  remoteCallers?: boolean;
  /** Receives security warnings (a forwarded request from an untrusted peer), at most one a minute. */
  onWarning?: (message: string) => void;
  /** Largest request body (default 1 MiB). */
  maxBodyBytes?: number;
}

const json = <T extends z.ZodType>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });
const E = (description: string) => json(s.errorSchema, description);
const UNAUTHORIZED = { 401: E('missing or wrong API key') };

function transitionBody(result: FeatureTransitionResult | WorkPackageTransitionResult) {
  const wp = 'work_package' in result ? result.work_package : null;
  return {
    feature_slug: result.feature.slug,
    wp_sequence: wp?.sequence ?? null,
    from: result.from,
    to: result.to,
    state: result.to,
    skipped: 'skipped' in result ? result.skipped : [],
    feature: result.feature,
    work_package: wp,
    entry: result.entry,
  };
}

/**
 * Builds the workflow API (mount it, or serve it with `startWorkflowHttpServer`).
 *
 * @example
 * ```ts
 * const app = createWorkflowApi({ workflow, apiKeys: ['s3cret'] });
 * const res = await app.request('/features', { headers: { authorization: 'Bearer s3cret' } });
 * ```
 */
export function createWorkflowApi(options: WorkflowApiOptions): OpenAPIHono {
  const { workflow } = options;
  const app = createControlPlaneApp();
  app.onError((error, c) => respondWorkflowError(c, error));
  // A path served under other methods is 405 with `Allow`; the key guard runs first, so without a key it is 401.
  app.notFound(methodNotAllowedOrNotFound(app));
  // A caller with an admin key acts under the key's name: that name may run admin-only operations.
  options.workflow.governance.admitAdmins(new ApiKeySet(options.apiKeys ?? []).adminNames);
  app.use('*', accessGuard(options.apiKeys ?? [], options.access ?? { bindHost: '127.0.0.1' }, options.onWarning, options.remoteCallers));
  // After the key: a chunked body is read to be measured, and a caller without the key gets its 401 before that.
  // A declared length is judged unread, so an `Expect: 100-continue` upload over the cap is never sent.
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  app.use('*', bodyCap(maxBodyBytes, `the request body must be at most ${maxBodyBytes} bytes`));
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', { type: 'http', scheme: 'bearer' });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/features',
      tags: ['features'],
      request: {
        query: z.object({
          state: z
            .string()
            .optional()
            .openapi({ description: `one of ${FEATURE_STATES.join(', ')}, in any case`, example: 'PLANNED' }),
        }),
      },
      responses: { 200: json(z.object({ features: z.array(s.feature) }), 'features, oldest first'), ...UNAUTHORIZED, 422: E('bad state') },
    }),
    async (c) => {
      const { state } = c.req.valid('query');
      return c.json({ features: await workflow.listFeatures(state !== undefined ? { state } : {}) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/features',
      tags: ['features'],
      request: { body: { content: { 'application/json': { schema: s.createFeatureBody } }, required: true } },
      responses: {
        201: json(s.feature, 'created (audited as NONE -> CREATED)'),
        ...UNAUTHORIZED,
        409: E('the slug is taken'),
        422: E('bad input'),
      },
    }),
    async (c) => c.json(await workflow.createFeature(c.req.valid('json')), 201),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/features/{slug}',
      tags: ['features'],
      request: { params: s.slugParam },
      responses: { 200: json(s.feature, 'the feature'), ...UNAUTHORIZED, 404: E('no such feature'), 422: E('bad slug') },
    }),
    async (c) => c.json(await workflow.getFeature(c.req.valid('param').slug), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/features/{slug}/transition',
      tags: ['features'],
      summary: 'Move the feature, or one of its work packages (wp_sequence), when the state machine and the gates allow it',
      request: { params: s.slugParam, body: { content: { 'application/json': { schema: s.transitionBody } }, required: true } },
      responses: {
        200: json(s.transitionResult, 'applied: the new state and its audit entry'),
        ...UNAUTHORIZED,
        404: E('no such feature or work package'),
        409: {
          content: { 'application/json': { schema: z.union([s.gateFailedSchema, s.errorSchema]) } },
          description: 'refused: gate_failed (with violations), invalid_transition, backward_transition or conflict',
        },
        422: E('bad input; details.field names the field'),
      },
    }),
    async (c) => c.json(transitionBody(await workflow.transition(c.req.valid('param').slug, c.req.valid('json'))) as never, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/features/{slug}/audit',
      tags: ['audit'],
      request: {
        params: s.slugParam,
        query: z.object({ verify: s.queryBoolean, limit: s.queryInt(10_000), since: z.string().datetime({ offset: true }).optional() }),
      },
      responses: {
        200: json(
          z.object({ entries: z.array(s.auditEntrySchema), verification: s.verificationSchema.optional() }),
          'entries, oldest first',
        ),
        ...UNAUTHORIZED,
        404: E('no such feature'),
        422: E('bad query'),
      },
    }),
    async (c) => {
      const { slug } = c.req.valid('param');
      const { verify, limit, since } = c.req.valid('query');
      await workflow.getFeature(slug);
      const entries = await workflow.audit.entries(slug, {
        ...(limit !== undefined ? { limit } : { limit: 50 }),
        ...(since ? { since } : {}),
      });
      return c.json({ entries, ...(verify ? { verification: await workflow.audit.verify(slug) } : {}) } as never, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/features/{slug}/work-packages',
      tags: ['work packages'],
      request: { params: s.slugParam },
      responses: {
        200: json(
          z.object({ work_packages: z.array(s.workPackage), waves: z.array(z.array(z.number().int())) }),
          'in sequence, with waves',
        ),
        ...UNAUTHORIZED,
        404: E('no such feature'),
      },
    }),
    async (c) => {
      const { slug } = c.req.valid('param');
      const [workPackages, waves] = await Promise.all([workflow.listWorkPackages(slug), workflow.waves(slug)]);
      return c.json({ work_packages: workPackages, waves }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/features/{slug}/work-packages',
      tags: ['work packages'],
      request: { params: s.slugParam, body: { content: { 'application/json': { schema: s.createWorkPackageBody } }, required: true } },
      responses: { 201: json(s.workPackage, 'created (PLANNED)'), ...UNAUTHORIZED, 404: E('no such feature'), 422: E('bad input') },
    }),
    async (c) => c.json(await workflow.createWorkPackage(c.req.valid('param').slug, c.req.valid('json')), 201),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/features/{slug}/governance',
      tags: ['governance'],
      summary: 'Check the gates of the next move (or of `to`) without applying it',
      request: { params: s.slugParam, query: z.object({ wp: s.queryInt(), to: z.string().min(1).optional() }) },
      responses: {
        200: json(s.gateResult, 'passed, or the violations'),
        ...UNAUTHORIZED,
        404: E('no such feature or work package'),
        409: E('no such move'),
      },
    }),
    async (c) => {
      const { wp, to } = c.req.valid('query');
      const result = await workflow.checkGovernance(c.req.valid('param').slug, {
        ...(wp ? { wp_sequence: wp } : {}),
        ...(to ? { to } : {}),
      });
      return c.json(result, 200);
    },
  );

  const jobs = () => workflow.store.reader;
  app.openapi(
    createRoute({
      method: 'get',
      path: '/jobs',
      tags: ['jobs'],
      request: { query: z.object({ feature_slug: z.string().optional(), state: z.enum(JOB_STATES).optional() }) },
      responses: { 200: json(z.object({ jobs: z.array(s.agentJob) }), 'newest first'), ...UNAUTHORIZED },
    }),
    async (c) => {
      const { feature_slug, state } = c.req.valid('query');
      const list = await jobs().listJobs({ ...(feature_slug ? { featureSlug: feature_slug } : {}), ...(state ? { state } : {}) });
      list.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
      return c.json({ jobs: list }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/jobs/{id}',
      tags: ['jobs'],
      request: { params: z.object({ id: z.string().min(1).max(100) }) },
      responses: { 200: json(s.agentJob, 'the job'), ...UNAUTHORIZED, 404: E('no such job') },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const job = await jobs().getJob(id);
      if (!job) throw new WorkflowError('not_found', `job ${JSON.stringify(id)} does not exist`);
      return c.json(job, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/jobs',
      tags: ['jobs'],
      summary: 'Start an agent job on a work package (runs in this server)',
      request: { body: { content: { 'application/json': { schema: s.startJobBody } }, required: true } },
      responses: {
        202: json(s.agentJob, 'the Pending job'),
        ...UNAUTHORIZED,
        404: E('no such work package'),
        409: E('the package already has an active job'),
        422: E('bad input'),
        501: E('no agent is configured on this server'),
      },
    }),
    async (c) => {
      if (!options.dispatcher) throw new WorkflowError('not_implemented', 'no agent is configured on this server');
      const body = c.req.valid('json');
      const job = await options.dispatcher.dispatch(body.feature_slug, body.wp_sequence, {
        ...(body.kind ? { kind: body.kind } : {}),
        ...(body.review_cycles ? { review_cycles: body.review_cycles } : {}),
        ...(body.timeout_ms ? { timeout_ms: body.timeout_ms } : {}),
      });
      return c.json(job, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/jobs/{id}/cancel',
      tags: ['jobs'],
      request: { params: z.object({ id: z.string().min(1).max(100) }) },
      responses: {
        200: json(
          s.agentJob,
          'the job: once its agent stopped (a job this server runs), marked Cancelled (one another process runs: that process stops its agent), or as it was, if it had ended',
        ),
        ...UNAUTHORIZED,
        404: E('no such job'),
        501: E('no agents here'),
      },
    }),
    async (c) => {
      if (!options.dispatcher) throw new WorkflowError('not_implemented', 'no agent is configured on this server');
      return c.json(await options.dispatcher.cancel(c.req.valid('param').id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/dispatch',
      tags: ['tools'],
      summary: 'The dispatch tool: run one hidden subcommand; failures are in the result (ok: false), every call is audit-logged',
      // A JSON Schema, not zod, on purpose: zod-openapi would then parse the body itself and answer 400/422 for an
      // envelope that is not JSON or not an object. The dispatch tool parses it, as on every other surface, so a bad
      // envelope is a result (ok: false, exit code 2) with its audit line.
      request: { body: { content: { 'application/json': { schema: s.dispatchEnvelopeJsonSchema } }, required: true } },
      responses: {
        200: json(s.dispatchResult, 'the result, also for an envelope that does not parse'),
        ...UNAUTHORIZED,
        415: E('the body is not sent as application/json'),
        501: E('no dispatch tool here'),
      },
    }),
    async (c) => {
      if (!options.dispatchTool) throw new WorkflowError('not_implemented', 'the dispatch tool is not configured on this server');
      if (!isJsonMediaType(c.req.header('content-type'))) throw new ApiError('unsupported_media_type', JSON_ONLY);
      const caller = (c as unknown as { get(key: 'caller'): CallerVariables['caller'] }).get('caller');
      return c.json((await options.dispatchTool.dispatch(await c.req.text(), caller ? { actor: caller.name } : {})) as never, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/webhooks/tracker',
      tags: ['sync'],
      summary: 'A delivery from the configured tracker, verified by its own scheme, applied once per delivery id',
      description: [
        "Linear: Linear-Signature = hex HMAC-SHA256 of the raw body; the body's webhookTimestamp (ms) within 60 s; Linear-Delivery de-duplicated.",
        'Plane: X-Plane-Signature = hex HMAC-SHA256 of the raw body; X-Plane-Delivery de-duplicated.',
        'Custom REST: x-switchyard-signature: sha256=<HMAC of "<x-switchyard-timestamp>.<x-switchyard-delivery>.<raw body>">, timestamp within 5 minutes.',
        'A state change in the tracker moves the feature through the governance gates (transitioned) or is refused with the violations, which are also posted on the issue as a comment (refused).',
        'The body is capped like every request body.',
      ].join(' '),
      responses: {
        200: json(s.webhookResult, 'applied, transitioned, refused, duplicate, conflict, ignored or in_sync'),
        401: E('signature_invalid (a bad signature, or a stale timestamp)'),
        422: E('missing delivery id or a body that is not JSON'),
        501: E('no webhook secret configured'),
      },
    }),
    async (c) => {
      const sync = options.sync;
      if (!sync) throw new WorkflowError('not_implemented', 'tracker sync is not configured on this server');
      const rawBody = new Uint8Array(await c.req.arrayBuffer());
      try {
        return c.json(await sync.handleTrackerWebhook({ headers: Object.fromEntries(c.req.raw.headers), rawBody }), 200);
      } catch (error) {
        if (error instanceof WorkflowError && error.code === 'invalid_argument' && error.details?.field === 'webhookSecret')
          throw new WorkflowError('not_implemented', 'no webhook secret is configured on this server');
        throw error;
      }
    },
  );

  app.get('/metrics', async (c) => {
    if (!options.metrics) return respondError(c, 'not_found', 'metrics are not enabled on this server');
    return c.body(await options.metrics.metrics(), 200, { 'content-type': options.metrics.contentType });
  });
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Switchyard workflow API',
      version: '1.0.0',
      description:
        'Features, work packages, governance gates, the audit trail, agent jobs and tracker sync. Errors are `{"error": {"code", "message", "details"?}}`. A method a path does not serve is `405 method_not_allowed`, with `Allow` listing the methods it does; only a path no route has is 404.',
    },
    security: (options.apiKeys ?? []).length ? [{ apiKey: [] }] : [],
  });
  return app;
}
