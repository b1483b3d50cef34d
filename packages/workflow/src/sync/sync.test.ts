import assert from 'node:assert/strict';
import { after, beforeEach, test } from 'node:test';
import type { FakeScheduler } from '@switchyard/runtime';
import { fakeServer, sendJson } from '../../test/fakeServer.js';
import { makeWorkflow } from '../../test/helpers.js';
import { WorkflowError } from '../errors.js';
import type { Workflow } from '../workflow.js';
import { RestTrackerAdapter } from './adapters.js';
import { contentHash, SyncEngine, signDelivery } from './syncEngine.js';

// ---- a fake tracker: OAuth client credentials + /issues ----
const issues = new Map<string, { id: string; title: string; description: string; state: string; url: string }>();
let issuedTokens = 0;
let revoked = new Set<string>();
const tracker = await fakeServer((req, res) => {
  if (req.url === '/oauth/token') {
    const basic = Buffer.from(String(req.headers.authorization).replace(/^Basic /, ''), 'base64').toString();
    if (basic !== 'client-1:secret-1' || !req.body.includes('grant_type=client_credentials'))
      return sendJson(res, 401, { error: 'invalid_client' });
    return sendJson(res, 200, { access_token: `token-${++issuedTokens}`, token_type: 'bearer', expires_in: 3600 });
  }
  const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
  if (!token.startsWith('token-') || revoked.has(token)) return sendJson(res, 401, { error: 'unauthorized' });
  const body = req.json as { title: string; description: string; state: string };
  if (req.method === 'POST' && req.url === '/api/issues') {
    const id = String(issues.size + 100);
    const issue = { id, ...body, url: `https://tracker.example/i/${id}` };
    issues.set(id, issue);
    return sendJson(res, 201, issue);
  }
  const match = /^\/api\/issues\/(\d+)$/.exec(req.url);
  const issue = match && issues.get(match[1]!);
  if (!issue) return sendJson(res, 404, { error: 'not found' });
  if (req.method === 'PATCH') Object.assign(issue, body);
  return sendJson(res, 200, issue);
});
after(() => tracker.close());

let workflow: Workflow;
let sync: SyncEngine;
let clock: FakeScheduler;
const SECRET = 'whsec-test';
beforeEach(async () => {
  ({ workflow, clock } = makeWorkflow());
  issues.clear();
  revoked = new Set();
  const adapter = new RestTrackerAdapter({
    baseUrl: `${tracker.url}/api`,
    oauth: { tokenUrl: `${tracker.url}/oauth/token`, clientId: 'client-1', clientSecret: 'secret-1' },
    stateMapping: { IMPLEMENTING: 'Doing' },
    clock,
    allowPrivateHosts: ['127.0.0.1'],
  });
  sync = new SyncEngine({ workflow, tracker: adapter, webhookSecret: SECRET });
  await workflow.createFeature({ slug: '001-login', title: 'Login', description: 'Passkeys', actor: 'alice' });
});

test('push creates the issue with the mapped state, then reports in_sync, then pushes local changes', async () => {
  const created = await sync.push('001-login');
  assert.equal(created.status, 'created');
  assert.deepEqual(issues.get(created.remote_id), {
    id: created.remote_id,
    title: 'Login',
    description: 'Passkeys',
    state: 'Backlog',
    url: created.remote_url,
  });
  assert.equal((await sync.push('001-login')).status, 'in_sync');
  await workflow.updateFeature('001-login', { title: 'Login with passkeys', actor: 'alice' });
  await workflow.transitionFeature('001-login', { to: 'IMPLEMENTING', actor: 'alice', force: true });
  assert.equal((await sync.push('001-login')).status, 'pushed');
  assert.equal(issues.get(created.remote_id)!.state, 'Doing', 'the configured mapping applies');
  assert.equal(issues.get(created.remote_id)!.title, 'Login with passkeys');
  const [link] = await sync.status('tracker');
  assert.equal(link!.local_hash, contentHash({ title: 'Login with passkeys', description: 'Passkeys', state: 'Doing' }));
});

test('OAuth: one token is reused until it expires, and a 401 fetches a fresh one', async () => {
  const before = issuedTokens;
  await sync.push('001-login');
  await sync.push('001-login');
  assert.equal(issuedTokens, before + 1, 'cached');
  revoked.add(`token-${issuedTokens}`);
  assert.equal((await sync.push('001-login')).status, 'in_sync');
  assert.equal(issuedTokens, before + 2, 'refreshed after a 401');
  await clock.advance(3600_000);
  await sync.push('001-login');
  assert.equal(issuedTokens, before + 3, 'refreshed on expiry');
  const bad = new RestTrackerAdapter({
    baseUrl: `${tracker.url}/api`,
    oauth: { tokenUrl: `${tracker.url}/oauth/token`, clientId: 'client-1', clientSecret: 'wrong' },
    allowPrivateHosts: ['127.0.0.1'],
  });
  await assert.rejects(
    bad.getIssue('1'),
    (e: unknown) => e instanceof WorkflowError && e.code === 'upstream_failed' && !e.message.includes('wrong'),
  );
});

test('content hashes decide: remote-only changes are pulled, local-only pushed, both changed is a conflict that overwrites nothing', async () => {
  const { remote_id } = await sync.push('001-login');
  issues.get(remote_id)!.description = 'Passkeys and magic links';
  assert.equal((await sync.push('001-login')).status, 'remote_changed');
  assert.equal((await sync.pull('001-login')).status, 'pulled');
  assert.equal((await workflow.getFeature('001-login')).description, 'Passkeys and magic links');
  assert.equal((await workflow.audit.entries('001-login')).at(-1)!.actor, 'sync:tracker');
  assert.equal((await sync.pull('001-login')).status, 'in_sync');
  issues.get(remote_id)!.title = 'Remote title';
  await workflow.updateFeature('001-login', { title: 'Local title', actor: 'alice' });
  const conflict = await sync.push('001-login');
  assert.equal(conflict.status, 'conflict');
  assert.equal(conflict.remote!.title, 'Remote title');
  assert.equal((await sync.pull('001-login')).status, 'conflict');
  assert.equal(issues.get(remote_id)!.title, 'Remote title');
  assert.equal((await workflow.getFeature('001-login')).title, 'Local title');
  issues.get(remote_id)!.state = 'Done';
  issues.get(remote_id)!.title = 'Local title';
  const drift = await sync.pull('001-login');
  assert.deepEqual(drift.state_drift, { remote: 'Done', local: 'CREATED', remote_means: 'SHIPPED' });
  assert.equal((await workflow.getFeature('001-login')).state, 'CREATED', 'states are never pulled');
  await assert.rejects(sync.pull('002-unlinked'), (e: unknown) => e instanceof WorkflowError && e.code === 'not_found');
});

/** Signed headers for a delivery sent now (by the fake clock). */
const signedNow = (body: Uint8Array | string, deliveryId: string, secret = SECRET) =>
  signDelivery(secret, { timestamp: String(Math.floor(clock.now() / 1000)), deliveryId, body });

test('webhooks: signed deliveries apply once; replays are duplicates; bad signatures are refused', async () => {
  const { remote_id } = await sync.push('001-login');
  const body = Buffer.from(
    JSON.stringify({ issue: { id: remote_id, title: 'Login (renamed in tracker)', description: 'Passkeys', state: 'Backlog' } }),
  );
  const headers = signedNow(body, 'delivery-1');
  assert.deepEqual(await sync.handleTrackerWebhook({ headers, rawBody: body }), {
    status: 'applied',
    delivery_id: 'delivery-1',
    feature_slug: '001-login',
  });
  assert.equal((await workflow.getFeature('001-login')).title, 'Login (renamed in tracker)');
  const entries = (await workflow.audit.entries('001-login')).length;
  assert.deepEqual(await sync.handleTrackerWebhook({ headers, rawBody: body }), { status: 'duplicate', delivery_id: 'delivery-1' });
  assert.equal((await workflow.audit.entries('001-login')).length, entries, 'a replay changes nothing');
  const invalid = (e: unknown) => e instanceof WorkflowError && e.code === 'signature_invalid';
  const tampered = Buffer.from(body.toString().replace('renamed', 'hijacked'));
  await assert.rejects(
    sync.handleTrackerWebhook({ headers: { ...headers, 'x-switchyard-delivery': 'delivery-2' }, rawBody: tampered }),
    invalid,
  );
  await assert.rejects(sync.handleTrackerWebhook({ headers: signedNow(body, 'd-3', 'other-secret'), rawBody: body }), invalid);
  await assert.rejects(
    sync.handleTrackerWebhook({ headers: { ...signedNow(body, 'd-4'), 'x-switchyard-signature': 'sha256=abc' }, rawBody: body }),
    invalid,
  );
  const { 'x-switchyard-signature': _unsigned, ...unsigned } = signedNow(body, 'd-5');
  await assert.rejects(sync.handleTrackerWebhook({ headers: unsigned, rawBody: body }), invalid);
  const { 'x-switchyard-delivery': _none, ...withoutDelivery } = signedNow(body, '');
  await assert.rejects(
    sync.handleTrackerWebhook({ headers: withoutDelivery, rawBody: body }),
    (e: unknown) => e instanceof WorkflowError && e.details?.field === 'delivery_id',
  );
  const unknown = Buffer.from(JSON.stringify({ issue: { id: '999', title: 'x' } }));
  assert.equal((await sync.handleTrackerWebhook({ headers: signedNow(unknown, 'd-6'), rawBody: unknown })).status, 'ignored');
  assert.equal((await workflow.getFeature('001-login')).title, 'Login (renamed in tracker)');
});

test('webhooks: a captured delivery replayed under a new delivery id is refused, and nothing is recorded for it', async () => {
  const { remote_id } = await sync.push('001-login');
  const body = Buffer.from(JSON.stringify({ issue: { id: remote_id, title: 'Renamed once', description: 'Passkeys', state: 'Backlog' } }));
  const captured = signedNow(body, 'delivery-1');
  assert.equal((await sync.handleTrackerWebhook({ headers: captured, rawBody: body })).status, 'applied');
  await workflow.updateFeature('001-login', { title: 'Renamed locally', actor: 'alice' });
  const entries = (await workflow.audit.entries('001-login')).length;
  await assert.rejects(
    sync.handleTrackerWebhook({ headers: { ...captured, 'x-switchyard-delivery': 'delivery-1-again' }, rawBody: body }),
    (e: unknown) => e instanceof WorkflowError && e.code === 'signature_invalid',
  );
  assert.equal((await workflow.getFeature('001-login')).title, 'Renamed locally');
  assert.equal((await workflow.audit.entries('001-login')).length, entries);
  assert.equal(
    await workflow.store.transact((tx) => tx.recordDelivery('delivery-1-again', new Date(clock.now()).toISOString())),
    true,
    'no row was added for the replay',
  );
});

test('webhooks: a timestamp more than 5 minutes from now is refused, even with a fresh id and a valid signature', async () => {
  const { remote_id } = await sync.push('001-login');
  const body = Buffer.from(JSON.stringify({ issue: { id: remote_id, title: 'Stale', description: 'Passkeys', state: 'Backlog' } }));
  const stale = signDelivery(SECRET, { timestamp: String(Math.floor(clock.now() / 1000) - 301), deliveryId: 'd-stale', body });
  const stale_ = (e: unknown) => e instanceof WorkflowError && e.code === 'signature_invalid' && e.details?.field === 'timestamp';
  await assert.rejects(sync.handleTrackerWebhook({ headers: stale, rawBody: body }), stale_);
  const future = signDelivery(SECRET, { timestamp: String(Math.floor(clock.now() / 1000) + 301), deliveryId: 'd-future', body });
  await assert.rejects(sync.handleTrackerWebhook({ headers: future, rawBody: body }), stale_);
  const { 'x-switchyard-timestamp': _none, ...untimed } = signDelivery(SECRET, { timestamp: '', deliveryId: 'd-untimed', body });
  await assert.rejects(sync.handleTrackerWebhook({ headers: untimed, rawBody: body }), stale_);
  assert.equal((await workflow.getFeature('001-login')).title, 'Login');
  const edge = signDelivery(SECRET, { timestamp: String(Math.floor(clock.now() / 1000) - 299), deliveryId: 'd-edge', body });
  assert.equal((await sync.handleTrackerWebhook({ headers: edge, rawBody: body })).status, 'applied');
});

test('webhooks: delivery ids are kept for the whole window, then pruned (fake clock)', async () => {
  const body = Buffer.from(JSON.stringify({ issue: { id: '999', title: 'x' } }));
  const first = signedNow(body, 'd-1');
  assert.equal((await sync.handleTrackerWebhook({ headers: first, rawBody: body })).status, 'ignored');
  await clock.advance(299_000);
  // Still within its timestamp window: the id must still be known, so the replay is a duplicate.
  assert.equal((await sync.handleTrackerWebhook({ headers: first, rawBody: body })).status, 'duplicate');
  await clock.advance(2_000);
  await assert.rejects(sync.handleTrackerWebhook({ headers: first, rawBody: body }), { code: 'signature_invalid' }, 'stale now');
  await clock.advance(300_000);
  // The next delivery prunes ids older than twice the window.
  assert.equal((await sync.handleTrackerWebhook({ headers: signedNow(body, 'd-2'), rawBody: body })).status, 'ignored');
  const justAfter = new Date(clock.now() + 1).toISOString();
  assert.equal(await workflow.store.transact((tx) => tx.pruneDeliveries(justAfter)), 1, 'd-1 was pruned already: only d-2 is left');
});
