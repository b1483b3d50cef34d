import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, test } from 'node:test';
import { PlaneClient } from '@makeplane/plane-node-sdk';
import { fakePlane } from '@switchyard/test-support/integrations';
import { makeWorkflow } from '../../../test/helpers.js';
import type { Workflow } from '../../workflow.js';
import { SyncEngine } from '../syncEngine.js';
import { planeWebhookVerifier, signPlaneDelivery } from '../webhooks.js';
import { PlaneTrackerAdapter, planeHtmlToText, textToPlaneHtml } from './planeTracker.js';

const plane = await fakePlane({
  apiKeys: ['plane_api_key'],
  oauth: { clientId: 'plane-app', clientSecret: 'plane-secret', installationId: 'inst-1' },
});
after(() => plane.close());
const SECRET = 'plane_wh_secret';

let workflow: Workflow;
let tracker: PlaneTrackerAdapter;
let sync: SyncEngine;
beforeEach(async () => {
  ({ workflow } = makeWorkflow());
  tracker = new PlaneTrackerAdapter({
    baseUrl: plane.url,
    workspaceSlug: plane.workspaceSlug,
    projectId: plane.projectId,
    auth: {
      type: 'oauth_client_credentials',
      tokenUrl: `${plane.url}/auth/o/token/`,
      clientId: 'plane-app',
      clientSecret: 'plane-secret',
      extraParams: { app_installation_id: 'inst-1' },
    },
    allowPrivateHosts: ['127.0.0.1'],
  });
  sync = new SyncEngine({ workflow, tracker, webhookVerifier: planeWebhookVerifier(SECRET) });
  await workflow.createFeature({ slug: '001-login', title: 'Login', description: 'Passkeys <b>only</b> & TOTP', actor: 'alice' });
});
afterEach(() => assert.deepEqual(plane.violations.splice(0), []));

/** A Plane work-item delivery as Plane sends it: the raw body signed with HMAC-SHA256, hex, in X-Plane-Signature. */
function delivery(itemId: string, deliveryId: string, secret = SECRET) {
  const body = JSON.stringify({
    event: 'issue',
    action: 'updated',
    webhook_id: 'wh-1',
    workspace_id: 'ws-1',
    data: { id: itemId },
    activity: { actor: { id: 'u-1', display_name: 'Dana' } },
  });
  return { headers: signPlaneDelivery(secret, deliveryId, body), rawBody: Buffer.from(body) };
}

test("the fake answers Plane's own SDK client: states, work items and comments at the paths the SDK uses", async () => {
  const client = new PlaneClient({ baseUrl: plane.url, apiKey: 'plane_api_key' });
  const states = await client.states.list(plane.workspaceSlug, plane.projectId);
  assert.deepEqual(
    states.results.map((s) => s.name),
    ['Backlog', 'Todo', 'In Progress', 'In Review', 'Done'],
  );
  const item = await client.workItems.create(plane.workspaceSlug, plane.projectId, { name: 'From the SDK', state: states.results[1]!.id });
  const read = await client.workItems.retrieve(plane.workspaceSlug, plane.projectId, item.id);
  assert.deepEqual([read.name, read.state], ['From the SDK', states.results[1]!.id]);
  await client.workItems.update(plane.workspaceSlug, plane.projectId, item.id, { name: 'Renamed' });
  await client.workItems.comments.create(plane.workspaceSlug, plane.projectId, item.id, { comment_html: '<p>hi</p>' });
  const comments = await client.workItems.comments.list(plane.workspaceSlug, plane.projectId, item.id);
  assert.deepEqual(
    comments.results.map((c) => c.comment_html),
    ['<p>hi</p>'],
  );
  await assert.rejects(new PlaneClient({ baseUrl: plane.url, apiKey: 'wrong' }).states.list(plane.workspaceSlug, plane.projectId));
});

test('a Plane item round-trips: push creates it, local edits update it, edits in Plane are pulled back', async () => {
  const created = await sync.push('001-login');
  assert.equal(created.status, 'created');
  const item = plane.items.get(created.remote_id)!;
  assert.equal(item.name, 'Login');
  assert.equal(item.description_html, '<p>Passkeys &lt;b&gt;only&lt;/b&gt; &amp; TOTP</p>', 'plain text is escaped into one paragraph');
  assert.equal(plane.states.find((s) => s.id === item.state)!.name, 'Backlog');
  assert.equal(plane.tokensIssued, 1, 'an OAuth bot token for the app installation');
  assert.equal((await sync.push('001-login')).status, 'in_sync', 'what was written reads back the same');

  await workflow.updateFeature('001-login', { title: 'Passkey login', actor: 'alice' });
  await workflow.transitionFeature('001-login', { to: 'SPECIFIED', actor: 'alice' });
  assert.equal((await sync.push('001-login')).status, 'pushed');
  assert.equal(item.name, 'Passkey login');
  assert.equal(plane.states.find((s) => s.id === item.state)!.name, 'Todo');

  item.name = 'Passkey login (web)';
  item.description_html = '<p>First line</p><p>Second &amp; last</p>';
  assert.equal((await sync.pull('001-login')).status, 'pulled');
  const feature = await workflow.getFeature('001-login');
  assert.deepEqual([feature.title, feature.description], ['Passkey login (web)', 'First line\n\nSecond & last']);
  assert.equal((await sync.pull('001-login')).status, 'in_sync');
  assert.equal(plane.tokensIssued, 1, 'the token is cached');
});

test('a Plane state change arrives by signed webhook and moves the feature; replays and bad signatures are refused', async () => {
  await workflow.transitionFeature('001-login', { to: 'PLANNED', actor: 'alice', force: true });
  const pushed = await sync.push('001-login');
  plane.setState(pushed.remote_id, 'In Progress');
  const first = delivery(pushed.remote_id, 'f819eff4-cd50-4987-bc97-e5be1e04c94f');
  assert.deepEqual(await sync.handleTrackerWebhook(first), {
    status: 'transitioned',
    delivery_id: 'f819eff4-cd50-4987-bc97-e5be1e04c94f',
    feature_slug: '001-login',
    transition: { from: 'PLANNED', to: 'IMPLEMENTING' },
  });
  assert.equal((await workflow.getFeature('001-login')).state, 'IMPLEMENTING');
  assert.equal((await sync.handleTrackerWebhook(first)).status, 'duplicate');
  await assert.rejects(sync.handleTrackerWebhook(delivery(pushed.remote_id, 'd-2', 'wrong-secret')), { code: 'signature_invalid' });
  const unsigned = delivery(pushed.remote_id, 'd-3');
  await assert.rejects(
    sync.handleTrackerWebhook({ headers: { ...unsigned.headers, 'x-plane-signature': '' }, rawBody: unsigned.rawBody }),
    {
      code: 'signature_invalid',
    },
  );
  plane.setState(pushed.remote_id, 'Done');
  const refused = await sync.handleTrackerWebhook(delivery(pushed.remote_id, 'd-4'));
  assert.equal(refused.status, 'refused');
  assert.equal(plane.comments.at(-1)!.issue, pushed.remote_id);
  assert.match(planeHtmlToText(plane.comments.at(-1)!.comment_html), /did not move feature `001-login` from IMPLEMENTING to SHIPPED/);
  const other = JSON.stringify({ event: 'project', action: 'updated', data: { id: 'p-1' } });
  assert.equal(
    (await sync.handleTrackerWebhook({ headers: signPlaneDelivery(SECRET, 'd-5', other), rawBody: Buffer.from(other) })).status,
    'ignored',
  );
});

test('plain text and Plane HTML map both ways', () => {
  for (const text of ['', 'a < b & c > "d"', 'two\nlines']) assert.equal(planeHtmlToText(textToPlaneHtml(text)), text);
  assert.equal(planeHtmlToText('<p>one<br/>two</p>'), 'one\ntwo');
});
