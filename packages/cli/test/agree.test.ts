/**
 * All three surfaces give the same answer to the same question: the CLI,
 * and the HTTP and gRPC servers `yard serve` starts over the same store.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { decodeStatusDetails, loadWorkflowProto } from '@switchyard/server-grpc';
import { main } from '../src/main.js';
import { type TempRepo, tempRepo, yard } from './helpers.js';

const SLUG = '001-login';
let repo: TempRepo;
let stop: (signal: string) => void;
let serving: Promise<unknown>;
let http: string;
let core: InstanceType<ReturnType<typeof loadWorkflowProto>['proto']['switchyard']['workflow']['v1']['CoreService']>;

const cli = async <T>(...args: string[]) => {
  const r = await yard([...args, '--output', 'json'], { cwd: repo.root });
  return { code: r.code, body: (r.code === 0 ? r.json<T>() : JSON.parse(r.stderr)) as T };
};
const get = async <T>(path: string) => {
  const res = await fetch(`${http}${path}`);
  return { status: res.status, body: (await res.json()) as T };
};
const rpc = <T>(method: string, request: object) =>
  new Promise<T>((resolve, reject) =>
    (core as unknown as Record<string, (r: object, m: Metadata, cb: (e: ServiceError | null, r: T) => void) => void>)[method]!(
      request,
      new Metadata(),
      (e, r) => (e ? reject(e) : resolve(r)),
    ),
  );
const stream = <T>(method: string, request: object) =>
  new Promise<T[]>((resolve, reject) => {
    const out: T[] = [];
    (core as unknown as Record<string, (r: object) => NodeJS.ReadableStream>)[method]!(request)
      .on('data', (x: T) => out.push(x))
      .on('end', () => resolve(out))
      .on('error', reject);
  });
/** gRPC leaves nulls unset and has no `detail` when empty: compare on the JSON the other two give. */
const nullable = (value: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(Object.entries({ ...Object.fromEntries(keys.map((k) => [k, null])), ...value }).filter(([k]) => !k.startsWith('_')));

before(async () => {
  repo = await tempRepo();
  assert.equal((await yard(['specify', SLUG, '--title', 'Log in', '--description', 'Passkeys.'], { cwd: repo.root })).code, 0);
  assert.equal((await yard(['plan', SLUG, '--force', '--wp', 'Form', '--wp', 'API'], { cwd: repo.root })).code, 0);
  assert.equal((await yard(['wp', 'move', SLUG, '1', 'DOING'], { cwd: repo.root })).code, 0);
  const started = new Promise<{ http: string; grpc: string }>((resolve, reject) => {
    serving = main(['serve', '--http', '0', '--grpc', '0', '--output', 'json'], {
      stdout: (text) => resolve(JSON.parse(text) as { http: string; grpc: string }),
      stderr: () => undefined,
      readStdin: async () => Buffer.alloc(0),
      stdinIsTTY: false,
      env: {},
      cwd: repo.root,
      stopSignal: new Promise((resolveStop) => {
        stop = resolveStop;
      }),
    }).then((code) => reject(new Error(`serve exited ${code}`)));
  });
  const addresses = await started;
  http = addresses.http;
  const { proto } = loadWorkflowProto();
  core = new proto.switchyard.workflow.v1.CoreService(addresses.grpc, credentials.createInsecure());
});

after(async () => {
  core?.close();
  stop?.('SIGTERM');
  await serving;
  await repo?.cleanup();
});

test('features: the list and one feature', async () => {
  const [c, h, g] = await Promise.all([
    cli<unknown[]>('feature', 'list'),
    get<{ features: unknown[] }>('/features'),
    rpc<{ features: unknown[] }>('ListFeatures', {}),
  ]);
  assert.deepEqual(h.body.features, c.body);
  assert.deepEqual(g.features, c.body);
  const [one, oneHttp, oneGrpc] = await Promise.all([
    cli<{ feature: unknown }>('feature', 'show', SLUG),
    get(`/features/${SLUG}`),
    rpc('GetFeature', { slug: SLUG }),
  ]);
  assert.deepEqual(oneHttp.body, one.body.feature);
  assert.deepEqual(oneGrpc, one.body.feature);
});

test('a state filter in any case, and a bad one refused naming the field state', async () => {
  const [c, h, g] = await Promise.all([
    cli<unknown[]>('feature', 'list', '--state', 'planned'),
    get<{ features: unknown[] }>('/features?state=planned'),
    rpc<{ features: unknown[] }>('ListFeatures', { state: 'planned' }),
  ]);
  assert.equal(c.body.length, 1);
  assert.deepEqual(h.body.features, c.body);
  assert.deepEqual(g.features, c.body);
  const [bc, bh, bg] = await Promise.all([
    cli<{ error: { code: string; details: { field: string } } }>('feature', 'list', '--state', 'bogus'),
    get<{ error: { code: string; details: { field: string } } }>('/features?state=bogus'),
    rpc('ListFeatures', { state: 'bogus' }).catch((e: ServiceError) => e),
  ]);
  assert.deepEqual([bc.code, bc.body.error.code, bc.body.error.details.field], [2, 'invalid_argument', 'state']);
  assert.deepEqual([bh.status, bh.body.error.code, bh.body.error.details.field], [422, 'invalid_argument', 'state']);
  assert.equal((bg as ServiceError).code, status.INVALID_ARGUMENT);
  assert.deepEqual(
    decodeStatusDetails((bg as ServiceError).metadata)?.field_violations.map((v) => v.field),
    ['state'],
  );
});

test('work packages, with their waves', async () => {
  const [c, h, g] = await Promise.all([
    cli<Record<string, unknown>[]>('wp', 'list', SLUG),
    get<{ work_packages: Record<string, unknown>[]; waves: number[][] }>(`/features/${SLUG}/work-packages`),
    rpc<{ work_packages: Record<string, unknown>[]; waves: { sequences: number[] }[] }>('ListWorkPackages', { slug: SLUG }),
  ]);
  const withoutWave = c.body.map(({ wave: _wave, ...wp }) => wp);
  assert.deepEqual(h.body.work_packages, withoutWave);
  assert.deepEqual(
    g.work_packages.map((wp) => nullable(wp, ['agent_id', 'pr_url'])),
    withoutWave,
  );
  assert.deepEqual(
    g.waves.map((w) => w.sequences),
    h.body.waves,
  );
});

test('a governance check, with the same violations', async () => {
  const [c, h, g] = await Promise.all([
    cli('governance:check', '--feature-slug', SLUG, '--wp', '1', '--transition', 'REVIEW'),
    get(`/features/${SLUG}/governance?wp=1&to=REVIEW`),
    rpc('CheckGovernanceGate', { slug: SLUG, wp_sequence: 1, to: 'REVIEW' }),
  ]);
  assert.deepEqual(h.body, c.body);
  assert.deepEqual(g, c.body);
  assert.equal((c.body as { passed: boolean }).passed, false);
});

test('the audit trail and its verification', async () => {
  const [c, h, g] = await Promise.all([
    cli<Record<string, unknown>[]>('audit:log', '--feature-slug', SLUG),
    get<{ entries: Record<string, unknown>[]; verification: unknown }>(`/features/${SLUG}/audit?verify=true`),
    stream<Record<string, unknown>>('GetAuditTrail', { slug: SLUG }),
  ]);
  assert.deepEqual(h.body.entries, c.body);
  assert.deepEqual(
    g.map((e) => e.id),
    c.body.map((e) => e.id),
  );
  assert.deepEqual(
    g.map((e) => [e.hash, e.transition, e.actor, e.wp_sequence ?? null]),
    c.body.map((e) => [e.hash, e.transition, e.actor, e.wp_sequence]),
  );
  const [v, vg] = await Promise.all([
    cli('audit:verify', '--feature-slug', SLUG),
    rpc<Record<string, unknown>>('VerifyAuditChain', { slug: SLUG }),
  ]);
  assert.deepEqual(h.body.verification, v.body);
  assert.deepEqual(nullable(vg, ['first_invalid_id', 'error_message', 'error_code']), v.body);
});

test('the same refusals: not found, and a failed gate', async () => {
  const [c, h, g] = await Promise.all([
    cli<{ error: { code: string } }>('feature', 'show', 'nope'),
    get<{ error: { code: string } }>('/features/nope'),
    rpc('GetFeature', { slug: 'nope' }).catch((e: ServiceError) => e),
  ]);
  assert.deepEqual([c.code, c.body.error.code], [3, 'not_found']);
  assert.deepEqual([h.status, h.body.error.code], [404, 'not_found']);
  assert.equal((g as ServiceError).metadata.get('switchyard-error-code')[0], 'not_found');
  const [lc, lh, lg] = await Promise.all([
    cli<{ error: { code: string } }>('audit:log', '--feature-slug', 'nope'),
    get<{ error: { code: string } }>('/features/nope/audit'),
    stream('GetAuditTrail', { slug: 'nope' }).catch((e: ServiceError) => e),
  ]);
  assert.deepEqual([lc.code, lc.body.error.code], [3, 'not_found'], 'the trail of an unknown feature is not found, not empty');
  assert.deepEqual([lh.status, lh.body.error.code], [404, 'not_found']);
  assert.equal((lg as ServiceError).code, status.NOT_FOUND);
  const refusedCli = await cli<{ error: { code: string; details: unknown } }>('wp', 'move', SLUG, '1', 'REVIEW');
  const refusedHttp = await fetch(`${http}/features/${SLUG}/transition`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ to: 'REVIEW', wp_sequence: 1, actor: 'Test User' }),
  });
  assert.equal(refusedCli.code, 4);
  assert.equal(refusedHttp.status, 409);
  assert.deepEqual(await refusedHttp.json(), refusedCli.body);
});
