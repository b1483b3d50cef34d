/**
 * The dashboard as a management centre, driven in Chromium as an operator
 * would: a credential added, disabled and enabled from the page; a device
 * sign-in started from the page's link (against the local fake
 * authorization server); a config edit checked, shown as a diff, applied by
 * hot reload; its log line found in the live logs with a filter. And the two
 * API additions the page relies on: `GET /v0/oauth` and the config dry run.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { requireChromium } from '@switchyard/test-support';
import { signInProviders, startFakeAuth } from '../../test/signInFixture.js';
import { startTestGateway } from '../../test/startTestGateway.js';

const KEY = 'management-centre-secret-key';
const auth = await startFakeAuth();
after(() => auth.stop());
const { gateway, path: configPath } = await startTestGateway(
  (dir) => `port: 0
auth-dir: ${dir}/auths
remote-management: { secret-key: ${KEY} }
providers:
${signInProviders(auth)}  plain:
    kind: mock
    models: [plain-model]
metrics: { enabled: false }
`,
);
const headers = { authorization: `Bearer ${KEY}` };

describe('the API the page relies on', () => {
  test('GET /v0/oauth lists the sign-in flows with their pages, for the management key only', async () => {
    assert.equal((await fetch(`${gateway.url}/v0/oauth`)).status, 401);
    const listed = (await (await fetch(`${gateway.url}/v0/oauth`, { headers })).json()) as {
      flows: { name: string; kind: string; page: string }[];
    };
    // The two configured above, and the code-assistant preset every gateway offers.
    assert.deepEqual(listed.flows.map((f) => [f.name, f.kind, f.page]).sort(), [
      ['acme', 'device-code', '/v0/oauth/acme'],
      ['cloud-coding-assistant', 'cloud-coding-assistant', '/v0/oauth/cloud-coding-assistant'],
      ['code-assistant', 'code-assistant', '/v0/oauth/code-assistant'],
    ]);
  });

  test('PUT /v0/management/config.yaml?dry_run=true checks without writing or applying; a bad config is 422 naming the field', async () => {
    const before = await readFile(configPath, 'utf8');
    const edited = before.replace('models: [plain-model]', 'models: [plain-model, dry-model]').replace('port: 0', 'port: 1');
    const dry = await fetch(`${gateway.url}/v0/management/config.yaml?dry_run=true`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/yaml' },
      body: edited,
    });
    assert.equal(dry.status, 200);
    assert.deepEqual(await dry.json(), { ok: true, persisted: false, restart_needed: ['port'], dry_run: true });
    assert.equal(await readFile(configPath, 'utf8'), before, 'the file is untouched');
    assert.ok(!gateway.relay.models().some((m) => m.id === 'dry-model'), 'nothing applied');
    const bad = await fetch(`${gateway.url}/v0/management/config.yaml?dry_run=true`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/yaml' },
      body: `${before}\nport: "not a port"\n`.replace(/^port: 0\n/m, ''),
    });
    assert.equal(bad.status, 422);
    const body = (await bad.json()) as { error: { code: string; details: { field: string; issues: { field: string }[] } } };
    assert.equal(body.error.code, 'validation_failed');
    assert.equal(body.error.details.field, 'port');
  });
});

const chromium = requireChromium();
test('in Chromium: add, disable and enable a credential; sign in through a flow; edit the config with a diff; find it in the live logs', {
  skip: chromium.skip,
  timeout: 120_000,
}, async () => {
  if (!chromium.available) return;
  const { chromium: launcher } = await import('playwright-core');
  const browser = await launcher.launch({ executablePath: chromium.executablePath, args: chromium.args });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      // The sign-in form is a 401 and the refused config a 422: the browser logs both as failed loads.
      if (message.type() === 'error' && !/status of (401|422)/.test(message.text())) errors.push(message.text());
    });
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel('Management key').fill(KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('body[data-ready="true"]');

    // A credential, added from the form: listed, never shown.
    await page.getByText('Add an API key').click();
    await page.locator('#credential-provider').selectOption('plain');
    await page.locator('#credential-id').fill('plain-team');
    await page.locator('#credential-token').fill('sk-plain-team-secret');
    await page.locator('#credential-label').fill('Team key');
    await page.locator('#credential-quota').fill('1000');
    await page.getByRole('button', { name: 'Add credential' }).click();
    const row = page.locator('#credentials tr[data-credential="plain-team"]');
    await row.waitFor();
    assert.equal(gateway.credentials.manager.describe('plain-team').provider, 'plain');
    assert.match((await row.textContent()) ?? '', /0 \/ 1000/);
    assert.ok(!(await page.content()).includes('sk-plain-team-secret'), 'the key is never put on the page');
    await page.getByRole('button', { name: 'Disable Team key' }).click();
    await row.filter({ hasText: 'disabled' }).waitFor();
    assert.equal(gateway.credentials.manager.describe('plain-team').status, 'disabled');
    await page.getByRole('button', { name: 'Enable Team key' }).click();
    await row.filter({ hasText: 'active' }).waitFor();

    // A device sign-in, from the page's link, approved at the fake provider.
    auth.script = ['await_user'];
    await page.getByRole('link', { name: 'Sign in: acme' }).click();
    await page.getByRole('button', { name: 'Start sign-in' }).click();
    const code = page.locator('#user-code');
    await code.filter({ hasText: /USER-\d+/ }).waitFor();
    auth.approve((await code.textContent())!.trim());
    await page.locator('body[data-state="succeeded"]').waitFor({ timeout: 20_000 });
    const signedIn = /credential (acme-[0-9a-f]{8})/.exec((await page.getByRole('status').textContent()) ?? '')?.[1];
    assert.ok(signedIn);
    await page.goto(`${gateway.url}/dashboard`);
    await page.locator(`#credentials tr[data-credential="${signedIn}"]`).waitFor();

    // The config: a bad edit is refused with the field; a good one shows its diff, then applies.
    await page.getByRole('button', { name: 'Open the editor' }).click();
    const editor = page.getByLabel('config.yaml');
    await editor.waitFor();
    const original = await editor.inputValue();
    assert.equal(original, await readFile(configPath, 'utf8'));
    await editor.fill(original.replace('port: 0', 'port: "not a port"'));
    await page.getByRole('button', { name: 'Check and show changes' }).click();
    await page
      .locator('#config-report')
      .filter({ hasText: /Not valid: .*port/ })
      .waitFor();
    assert.equal(await page.getByRole('button', { name: 'Apply' }).isDisabled(), true);
    await editor.fill(original.replace('models: [plain-model]', 'models: [plain-model, plain-extra]'));
    await page.getByRole('button', { name: 'Check and show changes' }).click();
    await page.locator('#config-diff .added').filter({ hasText: 'plain-extra' }).waitFor();
    assert.match((await page.locator('#config-diff .removed').textContent()) ?? '', /models: \[plain-model\]$/m);
    assert.ok(!gateway.relay.models().some((m) => m.id === 'plain-extra'), 'checked, not yet applied');
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      await page.screenshot({ path: fileURLToPath(new URL('../../../../docs/dashboard-config.png', import.meta.url)), fullPage: true });
    }
    await page.getByRole('button', { name: 'Apply' }).click();
    await page
      .locator('#config-report')
      .filter({ hasText: /^Applied and saved\./ })
      .waitFor();
    assert.ok(
      gateway.relay.models().some((m) => m.id === 'plain-extra'),
      'applied by hot reload',
    );
    assert.match(await readFile(configPath, 'utf8'), /plain-extra/);

    // The live logs: the reload's line, found with the text filter.
    await page.getByLabel('Contains').fill('config_reloaded');
    await page.locator('#log-lines tr[data-level="info"]').filter({ hasText: 'config_reloaded' }).first().waitFor();
    await page.getByLabel('Level').selectOption('50');
    await page.locator('#log-lines').filter({ hasText: 'No line matches the filters.' }).waitFor();
    await page.getByLabel('Level').selectOption('30');
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      await page.screenshot({ path: fileURLToPath(new URL('../../../../docs/dashboard-management.png', import.meta.url)), fullPage: true });
    }
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test('in Chromium: a client key created on the page (secret shown once) is used by the official openai client, the usage chart shows it, and revoking it locks the client out', {
  skip: chromium.skip,
  timeout: 120_000,
}, async () => {
  if (!chromium.available) return;
  const { default: OpenAI } = await import('openai');
  const { chromium: launcher } = await import('playwright-core');
  const browser = await launcher.launch({ executablePath: chromium.executablePath, args: chromium.args });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const errors: string[] = [];
    // The revoke asks for confirmation: the operator says yes.
    page.on('dialog', (dialog) => void dialog.accept());
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 401/.test(message.text())) errors.push(message.text());
    });
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel('Management key').fill(KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('body[data-ready="true"]');

    await page.getByText('Create a client key').click();
    await page.locator('#key-name').fill('ci-bot');
    await page.locator('#key-tenant').fill('platform');
    await page.locator('#key-models').fill('plain-*');
    await page.locator('#key-rpm').fill('100');
    await page.locator('#key-budget').fill('100000');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.locator('#key-secret-value');
    await secretBox.filter({ hasText: /^sk-sy-/ }).waitFor();
    const secret = (await secretBox.textContent())!.trim();
    const row = page.locator('#client-keys tr').filter({ hasText: 'ci-bot' });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /platform.*plain-\*.*100 req\/min/s);
    await page.getByRole('button', { name: 'Done' }).click();
    assert.ok(!(await page.content()).includes(secret), 'once dismissed, the secret is nowhere on the page');

    const client = new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    for (let i = 0; i < 3; i++) {
      const answer = await client.chat.completions.create({ model: 'plain-model', messages: [{ role: 'user', content: `hello ${i}` }] });
      assert.ok(answer.choices[0]?.message.content);
    }
    await assert.rejects(
      client.chat.completions.create({ model: 'acme-model', messages: [{ role: 'user', content: 'not mine' }] }),
      (error: { status?: number }) => error.status === 403 || error.status === 400,
      'a model outside the key’s list is refused',
    );

    // The usage panel, by client key, over the last hour: the three requests, on the chart and in the totals.
    await page.locator('#usage-range').selectOption('3600000');
    await page.locator('#usage-group').selectOption('key');
    const usageRow = page.locator('#usage-totals tr').filter({ hasText: 'ci-bot' });
    await usageRow.locator('td').nth(1).filter({ hasText: /^3$/ }).waitFor({ timeout: 30_000 });
    assert.ok(Number(await page.locator('#chart-usage').getAttribute('data-max')) >= 1, 'the chart has the use');
    // The key's own row: its budget holds the three answers' tokens (30 each), and it was used.
    await row.filter({ hasText: /90 \/ 100k tokens daily/ }).waitFor();
    assert.doesNotMatch((await row.locator('td').nth(7).textContent()) ?? '', /never/);
    assert.match((await page.locator('#usage-csv').getAttribute('href')) ?? '', /format=csv/);
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      await page.locator('#keys-panel').scrollIntoViewIfNeeded();
      await page.screenshot({ path: fileURLToPath(new URL('../../../../docs/dashboard-keys.png', import.meta.url)), fullPage: true });
    }

    await row.getByRole('button', { name: 'Revoke ci-bot' }).click();
    await row.filter({ hasText: 'revoked' }).waitFor();
    await assert.rejects(
      client.chat.completions.create({ model: 'plain-model', messages: [{ role: 'user', content: 'again' }] }),
      (error: { status?: number }) => error.status === 401,
    );
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});
