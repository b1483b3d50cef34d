import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertMethodNotAllowed, sendExpectingContinue, tempGitRepo } from '@switchyard/test-support';
import {
  AgentDispatcher,
  BUILTIN_SUBCOMMANDS,
  DispatchTool,
  HeuristicReviewer,
  MemoryWorkflowStore,
  MockAgentAdapter,
  SubcommandAuditLog,
  SubcommandRegistry,
  SyncEngine,
  type TrackerAdapter,
  Workflow,
} from '@switchyard/workflow';
import { ArtifactStore, GitRepository } from '@switchyard/workflow/git';
import { signDelivery } from '@switchyard/workflow/sync';
import { Registry } from 'prom-client';
import { createWorkflowApi } from './workflowApi.js';
import { startWorkflowHttpServer, type WorkflowHttpServer } from './workflowServer.js';

const SLUG = '001-login';
const KEY = 'k-123';
const SECRET = 'webhook-secret';
let workflow: Workflow;
let app: ReturnType<typeof createWorkflowApi>;

const tracker: TrackerAdapter = {
  mapState: (s) => s,
  unmapState: () => undefined,
  createIssue: async (c) => ({ id: '77', ...c, url: null }),
  updateIssue: async (id, c) => ({ id, ...c, url: null }),
  getIssue: async (id) => ({ id, title: 'Log in', description: '', state: 'SPECIFIED', url: null }),
};

const req = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  app.request(path, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });

before(async () => {
  // A repository of the test's own: dispatching a job creates a branch and a worktree in it.
  const repo = await tempGitRepo({ prefix: 'workflow-api-', readmeVersions: ['# shop\n'] });
  after(repo.cleanup);
  workflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop' });
  const sync = new SyncEngine({ workflow, tracker, webhookSecret: SECRET });
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'test' });
  const dispatcher = new AgentDispatcher({
    workflow,
    git: new GitRepository(repo.root),
    reviewer: new HeuristicReviewer(),
    adapters: [new MockAgentAdapter(async () => ({ exit_code: 0 }))],
  });
  app = createWorkflowApi({ workflow, sync, dispatcher, metrics: registry, apiKeys: [KEY] });
});

describe('workflow HTTP API', { concurrency: 1 }, () => {
  test('API keys: 401 without or with a wrong key; open paths stay open', async () => {
    const none = await app.request('/features');
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    assert.deepEqual(((await none.json()) as { error: { code: string } }).error.code, 'unauthorized');
    assert.equal((await app.request('/features', { headers: { 'x-api-key': 'nope' } })).status, 401);
    assert.equal((await app.request('/features', { headers: { 'x-api-key': KEY } })).status, 200);
    assert.equal((await app.request('/openapi.json')).status, 200);
    assert.equal((await app.request('/healthz')).status, 200);
  });

  test('POST /features: 201, 409 when the slug is taken, 422 naming the field', async () => {
    const created = await req('POST', '/features', { slug: SLUG, title: 'Log in', actor: 'alice' });
    assert.equal(created.status, 201);
    assert.equal(((await created.json()) as { state: string }).state, 'CREATED');
    const again = await req('POST', '/features', { slug: SLUG, title: 'Log in', actor: 'alice' });
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { error: { code: string } }).error.code, 'already_exists');
    const bad = await req('POST', '/features', { slug: 'Bad Slug', title: 'x', actor: 'alice' });
    assert.equal(bad.status, 422);
    const body = (await bad.json()) as { error: { code: string; details: { field: string } } };
    assert.deepEqual([body.error.code, body.error.details.field], ['validation_failed', 'slug']);
    assert.equal((await req('POST', '/features', '{"slug":')).status, 400);
  });

  test('GET /features and GET /features/:slug: 200, 404, 422', async () => {
    const list = (await (await req('GET', '/features')).json()) as { features: { slug: string }[] };
    assert.deepEqual(
      list.features.map((f) => f.slug),
      [SLUG],
    );
    assert.equal((await req('GET', '/features?state=NOPE')).status, 422);
    assert.deepEqual(((await (await req('GET', '/features?state=SHIPPED')).json()) as { features: unknown[] }).features, []);
    assert.equal((await req('GET', `/features/${SLUG}`)).status, 200);
    assert.equal((await req('GET', '/features/missing')).status, 404);
  });

  test('POST /features/:slug/transition: the new state and its entry; 409 with violations on a gate; 409 refused; 422; 404', async () => {
    const moved = await req('POST', `/features/${SLUG}/transition`, { to: 'SPECIFIED', actor: 'alice' });
    assert.equal(moved.status, 200);
    const body = (await moved.json()) as { state: string; from: string; entry: { transition: string; id: number } };
    assert.deepEqual([body.from, body.state, body.entry.transition], ['CREATED', 'SPECIFIED', 'CREATED -> SPECIFIED']);
    await workflow.createWorkPackage(SLUG, { title: 'Form', actor: 'alice' });
    assert.equal((await req('POST', `/features/${SLUG}/transition`, { to: 'DOING', wp_sequence: 1, actor: 'bob' })).status, 200);
    const gate = await req('POST', `/features/${SLUG}/transition`, { to: 'REVIEW', wp_sequence: 1, actor: 'bob' });
    assert.equal(gate.status, 409);
    const refused = (await gate.json()) as { error: { code: string; details: { violations: { rule_id: string; remediation: string }[] } } };
    assert.equal(refused.error.code, 'gate_failed');
    assert.deepEqual(
      refused.error.details.violations.map((v) => v.rule_id),
      ['wp-ci-before-review'],
    );
    assert.ok(refused.error.details.violations[0]!.remediation);
    const backwards = await req('POST', `/features/${SLUG}/transition`, { to: 'CREATED', actor: 'alice' });
    assert.equal(backwards.status, 409);
    assert.equal(((await backwards.json()) as { error: { code: string } }).error.code, 'backward_transition');
    const bad = await req('POST', `/features/${SLUG}/transition`, { to: 'RESEARCHED', actor: 'alice', wp_sequence: 'one' });
    assert.equal(bad.status, 422);
    assert.equal(((await bad.json()) as { error: { details: { field: string } } }).error.details.field, 'wp_sequence');
    assert.equal((await req('POST', `/features/${SLUG}/transition`, { to: 'RESEARCHED' })).status, 422);
    assert.equal((await req('POST', '/features/missing/transition', { to: 'SPECIFIED', actor: 'a' })).status, 404);
  });

  test('GET /features/:slug/audit (with ?verify), work packages and governance', async () => {
    const audit = (await (await req('GET', `/features/${SLUG}/audit?verify=true`)).json()) as {
      entries: { transition: string }[];
      verification: { valid: boolean; entries_verified: number };
    };
    // The refused move of the test above is on the record too (gate_refused, staying put).
    assert.equal(audit.entries.length, 5);
    assert.deepEqual([audit.verification.valid, audit.verification.entries_verified], [true, 5]);
    assert.equal(audit.entries.filter((e) => (e as { action?: string }).action === 'gate_refused').length, 1);
    const limited = (await (await req('GET', `/features/${SLUG}/audit?limit=1`)).json()) as { entries: unknown[]; verification?: unknown };
    assert.deepEqual([limited.entries.length, limited.verification], [1, undefined]);
    assert.equal(
      (await req('GET', `/features/${SLUG}/audit?limit=zero`)).status,
      400,
      'a bad query parameter is 400, as on every control plane',
    );
    assert.equal((await req('GET', '/features/missing/audit')).status, 404);
    const wps = (await (await req('GET', `/features/${SLUG}/work-packages`)).json()) as {
      work_packages: { sequence: number }[];
      waves: number[][];
    };
    assert.deepEqual([wps.work_packages.length, wps.waves], [1, [[1]]]);
    assert.equal((await req('GET', '/features/missing/work-packages')).status, 404);
    const added = await req('POST', `/features/${SLUG}/work-packages`, { title: 'API', depends_on: [1], actor: 'alice' });
    assert.equal(added.status, 201);
    const check = (await (await req('GET', `/features/${SLUG}/governance?wp=1`)).json()) as { passed: boolean; transition: string };
    assert.deepEqual([check.passed, check.transition], [false, 'DOING -> REVIEW']);
  });

  test('jobs: POST /jobs 202, GET /jobs and /jobs/:id, 404, 409 for a second active job, cancel', async () => {
    const bad = await req('POST', '/jobs', { feature_slug: SLUG });
    assert.equal(bad.status, 422);
    assert.equal((await req('POST', '/jobs', { feature_slug: SLUG, wp_sequence: 9 })).status, 404);
    const started = await req('POST', '/jobs', { feature_slug: SLUG, wp_sequence: 1 });
    assert.equal(started.status, 202);
    const job = (await started.json()) as { id: string; state: string };
    assert.equal(job.state, 'Pending');
    const list = (await (await req('GET', `/jobs?feature_slug=${SLUG}`)).json()) as { jobs: { id: string }[] };
    assert.deepEqual(
      list.jobs.map((j) => j.id),
      [job.id],
    );
    assert.equal((await req('GET', `/jobs/${job.id}`)).status, 200);
    assert.equal((await req('GET', '/jobs/00000000-0000-4000-8000-000000000000')).status, 404);
    const cancelled = (await (await req('POST', `/jobs/${job.id}/cancel`)).json()) as { state: string };
    assert.ok(['Cancelled', 'Failed', 'Completed'].includes(cancelled.state), cancelled.state);
  });

  test('POST /webhooks/tracker: signature checked (401), replay is a duplicate, no API key needed', async () => {
    await new SyncEngine({ workflow, tracker }).push(SLUG);
    const body = JSON.stringify({ issue: { id: '77', title: 'Log in, renamed', description: '', state: 'SPECIFIED' } });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const hook = (secret: string, deliveryId = 'd-1') =>
      app.request('/webhooks/tracker', {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...signDelivery(secret, { timestamp, deliveryId, body }) },
      });
    const forged = await hook('wrong');
    assert.equal(forged.status, 401);
    assert.equal(((await forged.json()) as { error: { code: string } }).error.code, 'signature_invalid');
    const applied = await hook(SECRET);
    assert.equal(applied.status, 200);
    assert.deepEqual(await applied.json(), { status: 'applied', delivery_id: 'd-1', feature_slug: SLUG });
    assert.equal((await workflow.getFeature(SLUG)).title, 'Log in, renamed');
    assert.equal(((await (await hook(SECRET)).json()) as { status: string }).status, 'duplicate');
    const { 'x-switchyard-delivery': _none, ...withoutDelivery } = signDelivery(SECRET, { timestamp, deliveryId: '', body });
    const noDelivery = await app.request('/webhooks/tracker', { method: 'POST', body, headers: withoutDelivery });
    assert.equal(noDelivery.status, 422);
  });

  test('GET /metrics, POST /dispatch without a tool (501), unknown routes (404), and /openapi.json describes every route', async () => {
    const metrics = await req('GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.headers.get('content-type') ?? '', /text\/plain/);
    assert.equal((await req('POST', '/dispatch', { command: 'dispatch_command', args: { command: 'branch:list' } })).status, 501);
    const missing = await req('GET', '/nope');
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'not_found');
    const doc = (await (await app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const [path, method] of [
      ['/features', 'get'],
      ['/features', 'post'],
      ['/features/{slug}', 'get'],
      ['/features/{slug}/transition', 'post'],
      ['/features/{slug}/audit', 'get'],
      ['/features/{slug}/work-packages', 'get'],
      ['/jobs', 'get'],
      ['/jobs/{id}', 'get'],
      ['/webhooks/tracker', 'post'],
    ] as const) {
      assert.ok(doc.paths[path]?.[method], `${method} ${path} is documented`);
    }
    assert.deepEqual(Object.keys(doc.paths['/features/{slug}/transition']!.post!.responses).sort(), ['200', '401', '404', '409', '422']);
  });
});

describe('a wrong method is 405 with Allow', () => {
  test('each path names the methods it serves; a path no route has stays 404', async () => {
    const wrong: [method: string, path: string, allow: string][] = [
      ['DELETE', '/features', 'GET, HEAD, POST'],
      ['GET', `/features/${SLUG}/transition`, 'POST'],
      ['PUT', '/jobs/some-job/cancel', 'POST'],
      ['POST', '/healthz', 'GET, HEAD'],
      ['GET', '/webhooks/tracker', 'POST'],
    ];
    for (const [method, path, allow] of wrong) await assertMethodNotAllowed(await req(method, path), allow, `${method} ${path}`);
    const missing = await req('DELETE', '/nope');
    assert.deepEqual([missing.status, missing.headers.get('allow')], [404, null]);
  });

  test('without the API key a wrong method is 401: which routes exist is not told', async () => {
    const response = await app.request('/features', { method: 'DELETE' });
    assert.deepEqual([response.status, response.headers.get('allow')], [401, null]);
  });

  test('Allow agrees with /openapi.json for every documented path', async () => {
    const doc = (await (await app.request('/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    for (const [template, operations] of Object.entries(doc.paths)) {
      const documented = new Set(Object.keys(operations).map((method) => method.toUpperCase()));
      if (documented.has('GET')) documented.add('HEAD');
      // No route serves PATCH, so it probes every path; `{param}` becomes a value the route accepts.
      const path = template.replace(/\{[^}]+\}/g, SLUG);
      const response = await req('PATCH', path);
      assert.equal(response.status, 405, `PATCH ${path}`);
      assert.equal(response.headers.get('allow'), [...documented].sort().join(', '), template);
    }
  });
});

describe('POST /dispatch: the dispatch tool parses the envelope, as on every other surface', () => {
  test('an envelope that is not JSON or not an object is a result (ok: false, exit 2) with its audit line; a body not sent as JSON is 415', async () => {
    const repo = await tempGitRepo({ prefix: 'workflow-dispatch-' });
    after(repo.cleanup);
    const log = await SubcommandAuditLog.open(repo.root, { repoName: 'shop' });
    after(() => log.close());
    const tool = new DispatchTool({
      registry: new SubcommandRegistry(BUILTIN_SUBCOMMANDS),
      log,
      context: { workflow, git: new GitRepository(repo.root), artifacts: new ArtifactStore(join(repo.root, 'artifacts')), actor: 'agent' },
    });
    const api = createWorkflowApi({ workflow, dispatchTool: tool });
    const post = (body: string, type = 'application/json') =>
      api.request('/dispatch', { method: 'POST', headers: type ? { 'content-type': type } : {}, body });
    for (const body of ['{"command":"dispatch_command","args":', '[]', '"audit:verify"']) {
      const res = await post(body);
      assert.equal(res.status, 200, body);
      const { audit: _a, duration_ms: _d, ...result } = (await res.json()) as Record<string, unknown>;
      // The same answer `yard dispatch` gives for the same text.
      const { audit: _a2, duration_ms: _d2, ...direct } = await tool.dispatch(body);
      assert.deepEqual(result, JSON.parse(JSON.stringify(direct)), body);
      assert.deepEqual([result.ok, result.exit_code, (result.error as { code: string }).code], [false, 2, 'invalid_argument'], body);
    }
    const audited = await log.tail(100);
    assert.deepEqual(
      audited.map((e) => [e.command, e.exit_code]),
      Array.from({ length: 6 }, () => ['dispatch_command', 2]),
    );
    assert.equal((await log.verify()).valid, true);
    const ok = (await (
      await post('{"command":"dispatch_command","args":{"command":"branch:list"}}', 'application/json; charset=utf-8')
    ).json()) as {
      ok: boolean;
    };
    assert.equal(ok.ok, true);
    const plain = await post('{"command":"dispatch_command","args":{"command":"branch:list"}}', 'text/plain');
    assert.equal(plain.status, 415);
    assert.equal(((await plain.json()) as { error: { code: string } }).error.code, 'unsupported_media_type');
    assert.equal((await log.tail(100)).length, 7, 'a refused transport writes no line');
  });

  test('a JSON route given a body that is not JSON answers 415, not 500', async () => {
    for (const headers of [{}, { 'content-type': 'text/plain' }] as Record<string, string>[]) {
      const res = await app.request('/features', {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, ...headers },
        body: JSON.stringify({ slug: 'x', title: 'x', actor: 'a' }),
      });
      assert.equal(res.status, 415);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'unsupported_media_type');
    }
  });
});

describe('on a real socket', () => {
  let server: WorkflowHttpServer;
  before(async () => {
    server = await startWorkflowHttpServer({ workflow: new Workflow({ store: new MemoryWorkflowStore(), repoName: 'x' }), port: 0 });
  });
  after(() => server.close());

  test('serves on 127.0.0.1, open without keys, and refuses oversized bodies with 413', async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal((await fetch(`${server.url}/features`)).status, 200);
    const big = await fetch(`${server.url}/features`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ slug: 'x', title: 'x', actor: 'a', description: 'y'.repeat(2 * 1024 * 1024) }),
    });
    assert.equal(big.status, 413);
    assert.equal((await fetch(`${server.url}/metrics`)).status, 404, 'no metrics source configured');
  });
});

describe('Expect: 100-continue on a real socket', () => {
  let server: WorkflowHttpServer;
  before(async () => {
    const store = new MemoryWorkflowStore();
    server = await startWorkflowHttpServer({ workflow: new Workflow({ store, repoName: 'x' }), apiKeys: [KEY], port: 0 });
  });
  after(() => server.close());
  const feature = JSON.stringify({ slug: '002-continue', title: 'Continue', actor: 'a' });
  const send = (headers: Record<string, string>, contentLength?: number, body?: string) =>
    sendExpectingContinue(`${server.url}/features`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      ...(contentLength === undefined ? {} : { contentLength }),
      ...(body === undefined ? {} : { body }),
    });

  test('a body over the cap, or without the key (declared or chunked), is refused before the 100', async () => {
    const refusals: [what: string, outcome: Promise<Awaited<ReturnType<typeof send>>>, status: number][] = [
      ['over the 1 MiB cap', send({ authorization: `Bearer ${KEY}` }, 1024 * 1024 + 1), 413],
      ['no key', send({}, Buffer.byteLength(feature), feature), 401],
      ['a wrong key, chunked', send({ authorization: 'Bearer wrong' }, undefined, feature), 401],
    ];
    for (const [what, pending, status] of refusals) {
      const outcome = await pending;
      assert.deepEqual([outcome.status, outcome.continued], [status, false], `${what}: ${outcome.body}`);
      assert.equal(typeof JSON.parse(outcome.body).error.code, 'string', what);
      assert.equal(outcome.headers.connection, 'close', `${what}: the body never came, so the connection ends`);
    }
  });

  test('a body within the cap, with the key, gets its 100 and is served', async () => {
    const outcome = await send({ authorization: `Bearer ${KEY}` }, Buffer.byteLength(feature), feature);
    assert.deepEqual([outcome.status, outcome.continued], [201, true], outcome.body);
    assert.equal(JSON.parse(outcome.body).slug, '002-continue');
  });
});
