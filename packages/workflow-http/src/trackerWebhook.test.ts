/**
 * `POST /webhooks/tracker` with real trackers' schemes: a Linear delivery
 * (Linear-Signature over the raw body, webhookTimestamp within 60 s,
 * Linear-Delivery de-duplicated) moves a feature through the gates; a
 * mis-signed, replayed or stale one is refused; a body over the cap is
 * refused before it is read.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fakeLinear } from '@switchyard/test-support/integrations';
import { LinearTrackerAdapter, linearWebhookVerifier, MemoryWorkflowStore, SyncEngine, Workflow } from '@switchyard/workflow';
import { signLinearDelivery } from '@switchyard/workflow/sync';
import { createWorkflowApi } from './workflowApi.js';

const SECRET = 'lin_wh_secret';
const linear = await fakeLinear({ authorizations: ['lin_api_http'] });
after(() => linear.close());
let workflow: Workflow;
let app: ReturnType<typeof createWorkflowApi>;
let issueId: string;

before(async () => {
  workflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop' });
  const tracker = new LinearTrackerAdapter({
    apiUrl: linear.url,
    teamId: linear.teamId,
    auth: { type: 'api_key', apiKey: 'lin_api_http' },
    allowPrivateHosts: ['127.0.0.1'],
  });
  const sync = new SyncEngine({ workflow, tracker, webhookVerifier: linearWebhookVerifier(SECRET) });
  app = createWorkflowApi({ workflow, sync, apiKeys: ['k-1'], maxBodyBytes: 64 * 1024 });
  await workflow.createFeature({ slug: '001-login', title: 'Login', description: '', actor: 'alice' });
  await workflow.transitionFeature('001-login', { to: 'PLANNED', actor: 'alice', force: true });
  issueId = (await sync.push('001-login')).remote_id;
});

const post = (deliveryId: string, options: { secret?: string; at?: number; pad?: number } = {}) => {
  const body = JSON.stringify({
    action: 'update',
    type: 'Issue',
    data: { id: issueId },
    webhookTimestamp: options.at ?? Date.now(),
    ...(options.pad ? { padding: 'x'.repeat(options.pad) } : {}),
  });
  return app.request('/webhooks/tracker', {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      // As on a socket: the cap judges the declared length before reading (http-kit's bodyCap).
      'content-length': String(Buffer.byteLength(body)),
      ...signLinearDelivery(options.secret ?? SECRET, deliveryId, body),
    },
  });
};

test('a signed Linear delivery moves the feature; replays, forgeries, stale and oversized deliveries are refused', async () => {
  linear.setState(issueId, 'In Progress');
  const forged = await post('d-0', { secret: 'wrong' });
  assert.equal(forged.status, 401);
  assert.equal(((await forged.json()) as { error: { code: string } }).error.code, 'signature_invalid');
  assert.equal((await workflow.getFeature('001-login')).state, 'PLANNED', 'a forged delivery changes nothing');
  const applied = await post('d-1');
  assert.equal(applied.status, 200);
  assert.deepEqual(await applied.json(), {
    status: 'transitioned',
    delivery_id: 'd-1',
    feature_slug: '001-login',
    transition: { from: 'PLANNED', to: 'IMPLEMENTING' },
  });
  assert.equal((await workflow.getFeature('001-login')).state, 'IMPLEMENTING');
  assert.deepEqual(await (await post('d-1')).json(), { status: 'duplicate', delivery_id: 'd-1' });
  assert.equal((await post('d-2', { at: Date.now() - 120_000 })).status, 401, 'webhookTimestamp two minutes old');
  assert.equal((await post('d-3', { pad: 128 * 1024 })).status, 413);
  linear.setState(issueId, 'Done');
  const refused = (await (await post('d-4')).json()) as { status: string; violations: { rule_id: string }[] };
  assert.equal(refused.status, 'refused');
  assert.match(linear.comments.at(-1)!.body, /did not move feature `001-login` from IMPLEMENTING to SHIPPED/);
  assert.deepEqual(linear.violations, []);
});
