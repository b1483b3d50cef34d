import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { requireChromium } from '@switchyard/test-support';
import { startSignInGateway } from '../../test/signInFixture.js';

const KEY = 'sign-in-page-secret';
const { auth, gateway, close } = await startSignInGateway(KEY);
after(close);

const chromium = requireChromium();

async function withPage(run: (page: import('playwright-core').Page, errors: string[]) => Promise<void>) {
  if (!chromium.available) throw new Error('Chromium is required (the tests that call this skip without it)');
  const { chromium: launcher } = await import('playwright-core');
  const browser = await launcher.launch({ executablePath: chromium.executablePath, args: chromium.args });
  try {
    const page = await browser.newPage({ viewport: { width: 1000, height: 760 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      // The key form is a 401 and a refused start a 422: the browser logs both as failed loads.
      if (message.type() === 'error' && !/status of (401|422)/.test(message.text())) errors.push(message.text());
    });
    await run(page, errors);
  } finally {
    await browser.close();
  }
}

async function signIn(page: import('playwright-core').Page, flow: string) {
  await page.goto(`${gateway.url}/v0/oauth/${flow}`);
  await page.getByLabel('Management key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Start sign-in' }).waitFor();
  assert.equal(new URL(page.url()).pathname, `/v0/oauth/${flow}`, 'the key form returns to the sign-in page');
  assert.doesNotMatch(page.url(), new RegExp(KEY), 'the key never appears in a URL');
}

test('in Chromium: start, read the code, approve it at the provider, see success', {
  skip: chromium.skip,
  timeout: 60_000,
}, async () => {
  if (!chromium.available) return;
  auth.script = ['await_user'];
  await withPage(async (page, errors) => {
    await signIn(page, 'acme');
    await page.getByRole('button', { name: 'Start sign-in' }).click();
    const code = page.locator('#user-code');
    await code.filter({ hasText: /USER-\d+/ }).waitFor();
    const userCode = (await code.textContent())!.trim();
    const link = page.locator('#verification');
    assert.equal(await link.textContent(), `${auth.url}/activate`);
    assert.equal(await link.getAttribute('href'), `${auth.url}/activate?code=${userCode}`);
    await page.getByRole('button', { name: 'Copy code' }).click();
    await page
      .locator('#copied')
      .filter({ hasText: /Copied|Selected/ })
      .waitFor();
    await page.locator('body[data-state="pending"]').waitFor();
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      await mkdir(fileURLToPath(new URL('../../../../docs/', import.meta.url)), { recursive: true });
      await page.screenshot({ path: fileURLToPath(new URL('../../../../docs/sign-in.png', import.meta.url)), fullPage: true });
    }
    auth.approve(userCode);
    await page.locator('body[data-state="succeeded"]').waitFor({ timeout: 20_000 });
    const status = (await page.getByRole('status').textContent()) ?? '';
    const id = /credential (acme-[0-9a-f]{8})/.exec(status)?.[1];
    assert.ok(id, status);
    assert.equal(gateway.credentials.manager.describe(id).provider, 'acme');
    assert.deepEqual(errors, []);
  });
});

test('in Chromium: identity-center fields are checked, a denied sign-in and an expired code are told apart', {
  skip: chromium.skip,
  timeout: 60_000,
}, async () => {
  if (!chromium.available) return;
  await withPage(async (page, errors) => {
    await signIn(page, 'cloud-coding-assistant');
    await page.getByLabel('IAM Identity Center (an organization)').check();
    await page.getByLabel('Start URL').fill('https://my-org.awsapps.com/start');
    await page.getByLabel('Region').fill('the moon');
    await page.getByRole('button', { name: 'Start sign-in' }).click();
    await page
      .locator('#form-error')
      .filter({ hasText: /region: must be a region name/ })
      .waitFor();

    auth.script = ['await_user'];
    await page.getByLabel('Region').fill('eu-central-1');
    await page.getByRole('button', { name: 'Start sign-in' }).click();
    const code = page.locator('#user-code');
    await code.filter({ hasText: /USER-\d+/ }).waitFor();
    assert.equal(auth.calls('/oidc/eu-central-1/device_authorization').at(-1)!.body.startUrl, 'https://my-org.awsapps.com/start');
    auth.deny((await code.textContent())!.trim());
    await page.locator('body[data-state="failed"]').waitFor({ timeout: 20_000 });
    assert.match((await page.getByRole('status').textContent()) ?? '', /denied/);

    auth.script = ['authorization_pending', 'expired_token'];
    await page.getByRole('button', { name: 'Start again' }).click();
    await page.getByLabel('Builder ID (a personal account)').check();
    await page.getByRole('button', { name: 'Start sign-in' }).click();
    await page.locator('body[data-state="expired"]').waitFor({ timeout: 20_000 });
    assert.match((await page.getByRole('status').textContent()) ?? '', /code expired/);
    assert.deepEqual(errors, []);
  });
});

test('in Chromium: when the gateway stops answering the polls, the page says so instead of waiting forever', {
  skip: chromium.skip,
  timeout: 60_000,
}, async () => {
  if (!chromium.available) return;
  auth.script = ['await_user'];
  await withPage(async (page, errors) => {
    await signIn(page, 'acme');
    await page.getByRole('button', { name: 'Start sign-in' }).click();
    await page
      .locator('#user-code')
      .filter({ hasText: /USER-\d+/ })
      .waitFor();
    // From here on every poll fails as if the network were down.
    await page.route('**/v0/oauth/sessions/**', (route) => route.abort('connectionrefused'));
    await page.locator('body[data-state="failed"]').waitFor({ timeout: 30_000 });
    assert.match((await page.getByRole('status').textContent()) ?? '', /cannot be reached \(network error\)/);
    assert.ok(
      errors.every((error) => /ERR_CONNECTION_REFUSED/.test(error)),
      errors.join('\n'),
    );
  });
});
