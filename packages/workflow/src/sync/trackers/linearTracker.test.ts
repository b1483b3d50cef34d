import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, test } from 'node:test';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import type { FakeScheduler } from '@switchyard/runtime';
import { fakeLinear } from '@switchyard/test-support/integrations';
import { makeWorkflow } from '../../../test/helpers.js';
import type { Workflow } from '../../workflow.js';
import { SyncEngine } from '../syncEngine.js';
import { linearWebhookVerifier, signLinearDelivery } from '../webhooks.js';
import { LinearTrackerAdapter } from './linearTracker.js';

const linear = await fakeLinear({ authorizations: ['lin_api_personal'], oauth: { clientId: 'lin-client', clientSecret: 'lin-secret' } });
after(() => linear.close());
const SECRET = 'lin_wh_secret';

let workflow: Workflow;
let clock: FakeScheduler;
let tracker: LinearTrackerAdapter;
let sync: SyncEngine;
beforeEach(async () => {
  ({ workflow, clock } = makeWorkflow());
  tracker = new LinearTrackerAdapter({
    apiUrl: linear.url,
    teamId: linear.teamId,
    auth: {
      type: 'oauth_client_credentials',
      tokenUrl: linear.url.replace('/graphql', '/oauth/token'),
      clientId: 'lin-client',
      clientSecret: 'lin-secret',
      scope: 'read,write',
    },
    allowPrivateHosts: ['127.0.0.1'],
    clock,
  });
  sync = new SyncEngine({ workflow, tracker, webhookVerifier: linearWebhookVerifier(SECRET) });
  await workflow.createFeature({ slug: '001-login', title: 'Login', description: 'Passkeys', actor: 'alice' });
  await workflow.transitionFeature('001-login', { to: 'PLANNED', actor: 'alice', force: true });
});
afterEach(() => assert.deepEqual(linear.violations.splice(0), []));

/** A Linear "Issue updated" delivery as Linear sends it: the body carries `webhookTimestamp` (ms), signed as a whole. */
function delivery(issueId: string, deliveryId: string, options: { at?: number; secret?: string } = {}) {
  const body = JSON.stringify({
    action: 'update',
    type: 'Issue',
    data: { id: issueId },
    url: `https://linear.app/acme/issue/${issueId}`,
    createdAt: new Date(options.at ?? clock.now()).toISOString(),
    webhookTimestamp: options.at ?? clock.now(),
    webhookId: 'wh-1',
  });
  return { headers: signLinearDelivery(options.secret ?? SECRET, deliveryId, body), rawBody: Buffer.from(body) };
}

test('the adapter drives Linear through @linear/sdk: create, update, read and comment, with an OAuth client-credentials token', async () => {
  const created = await tracker.createIssue({ title: 'Login', description: 'Passkeys', state: 'Todo' });
  assert.deepEqual(created, {
    id: created.id,
    title: 'Login',
    description: 'Passkeys',
    state: 'Todo',
    url: 'https://linear.app/acme/issue/ENG-1',
  });
  const updated = await tracker.updateIssue(created.id, { title: 'Login v2', description: 'Passkeys and TOTP', state: 'In Progress' });
  assert.deepEqual([updated.title, updated.description, updated.state], ['Login v2', 'Passkeys and TOTP', 'In Progress']);
  await tracker.commentOnIssue(created.id, 'hello');
  assert.deepEqual(linear.comments.at(-1), { issueId: created.id, body: 'hello' });
  await assert.rejects(
    tracker.updateIssue(created.id, { title: 'x', description: '', state: 'Nonexistent' }),
    /no workflow state named "Nonexistent"/,
  );
  const withKey = new LinearTrackerAdapter({
    apiUrl: linear.url,
    teamId: linear.teamId,
    auth: { type: 'api_key', apiKey: 'lin_api_personal' },
    allowPrivateHosts: ['127.0.0.1'],
  });
  assert.equal((await withKey.getIssue(created.id)).title, 'Login v2');
  const wrong = new LinearTrackerAdapter({
    apiUrl: linear.url,
    teamId: linear.teamId,
    auth: { type: 'api_key', apiKey: 'lin_api_wrong' },
    allowPrivateHosts: ['127.0.0.1'],
  });
  await assert.rejects(
    wrong.getIssue(created.id),
    (e: Error & { code?: string }) => e.code === 'upstream_failed' && !e.message.includes('lin_api_wrong'),
  );
});

test('a Linear state change moves the feature through the gates; a refused one is commented on the issue', async () => {
  const pushed = await sync.push('001-login');
  assert.equal(linear.issues.get(pushed.remote_id)!.title, 'Login');
  // Someone starts the issue in Linear: PLANNED -> IMPLEMENTING, an ungated move.
  linear.setState(pushed.remote_id, 'In Progress');
  const moved = await sync.handleTrackerWebhook(delivery(pushed.remote_id, 'a1f8e0c2-0001'));
  assert.deepEqual(moved, {
    status: 'transitioned',
    delivery_id: 'a1f8e0c2-0001',
    feature_slug: '001-login',
    transition: { from: 'PLANNED', to: 'IMPLEMENTING' },
  });
  assert.equal((await workflow.getFeature('001-login')).state, 'IMPLEMENTING');
  const entry = (await workflow.audit.entries('001-login')).at(-1)!;
  assert.deepEqual([entry.transition, entry.actor], ['PLANNED -> IMPLEMENTING', 'sync:tracker']);
  assert.equal((await sync.push('001-login')).status, 'in_sync', 'the link records the new state on both sides');

  // Someone drags it to "In Review": IMPLEMENTING -> VALIDATED is gated (work packages done, a passing test run).
  linear.setState(pushed.remote_id, 'In Review');
  const refused = await sync.handleTrackerWebhook(delivery(pushed.remote_id, 'a1f8e0c2-0002'));
  assert.equal(refused.status, 'refused');
  assert.deepEqual(refused.transition, { from: 'IMPLEMENTING', to: 'VALIDATED' });
  assert.ok(refused.violations!.some((v) => v.rule_id === 'feature-tests-before-validated'));
  assert.equal((await workflow.getFeature('001-login')).state, 'IMPLEMENTING', 'nothing moved');
  const comment = linear.comments.at(-1)!;
  assert.equal(comment.issueId, pushed.remote_id);
  assert.match(comment.body, /did not move feature `001-login` from IMPLEMENTING to VALIDATED/);
  assert.match(comment.body, /feature-tests-before-validated/);

  // "Done" skips VALIDATED: the state machine refuses, and says so too.
  linear.setState(pushed.remote_id, 'Done');
  const skipped = await sync.handleTrackerWebhook(delivery(pushed.remote_id, 'a1f8e0c2-0003'));
  assert.equal(skipped.status, 'refused');
  assert.match(linear.comments.at(-1)!.body, /state-machine:invalid_transition/);
});

test('a replayed, mis-signed or stale Linear delivery is refused', async () => {
  const pushed = await sync.push('001-login');
  linear.setState(pushed.remote_id, 'In Progress');
  const first = delivery(pushed.remote_id, 'b2c9-0001');
  assert.equal((await sync.handleTrackerWebhook(first)).status, 'transitioned');
  assert.deepEqual(
    await sync.handleTrackerWebhook(first),
    { status: 'duplicate', delivery_id: 'b2c9-0001' },
    'the same Linear-Delivery is applied once',
  );
  const forged = delivery(pushed.remote_id, 'b2c9-0002', { secret: 'not-the-secret' });
  await assert.rejects(sync.handleTrackerWebhook(forged), { code: 'signature_invalid' });
  const tampered = delivery(pushed.remote_id, 'b2c9-0003');
  await assert.rejects(
    sync.handleTrackerWebhook({ ...tampered, rawBody: Buffer.from(tampered.rawBody.toString().replace('update', 'remove')) }),
    {
      code: 'signature_invalid',
    },
  );
  const stale = delivery(pushed.remote_id, 'b2c9-0004', { at: clock.now() - 61_000 });
  await assert.rejects(sync.handleTrackerWebhook(stale), { code: 'signature_invalid' }, 'webhookTimestamp more than 60 s old');
  const edge = delivery(pushed.remote_id, 'b2c9-0005', { at: clock.now() - 59_000 });
  assert.equal((await sync.handleTrackerWebhook(edge)).status, 'in_sync');
  const unnamed = delivery(pushed.remote_id, 'x');
  const { 'linear-delivery': _id, ...noId } = unnamed.headers;
  await assert.rejects(sync.handleTrackerWebhook({ headers: noId, rawBody: unnamed.rawBody }), { code: 'invalid_argument' });
  assert.equal((await workflow.getFeature('001-login')).state, 'IMPLEMENTING');
});

test("the signature scheme is Linear's own: deliveries signed here verify with @linear/sdk's LinearWebhookClient", () => {
  const body = JSON.stringify({ action: 'update', type: 'Issue', data: { id: 'i-1' }, webhookTimestamp: Date.now() });
  const headers = signLinearDelivery(SECRET, 'd-1', body);
  const client = new LinearWebhookClient(SECRET);
  assert.equal(client.verify(Buffer.from(body), headers['linear-signature']!), true);
  assert.throws(() => new LinearWebhookClient('other').verify(Buffer.from(body), headers['linear-signature']!));
  // And one signed by the SDK's scheme verifies here.
  const verified = linearWebhookVerifier(SECRET).verify({ headers: { ...headers }, rawBody: Buffer.from(body) }, Date.now());
  assert.deepEqual(verified, { deliveryId: 'd-1', dedupKey: 'linear:d-1', issue: { id: 'i-1' } });
});
