import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { requireChromium } from '@switchyard/test-support';
import { Client } from 'undici';
import { startTestGateway } from '../../test/startTestGateway.js';
import { CONTROL_PLANE_BODY_LIMIT } from './controlPlane.js';

const KEY = 'dashboard-secret';
const authDir = await mkdtemp(join(tmpdir(), 'dashboard-auths-'));
const { gateway } = await startTestGateway(`
port: 0
auth-dir: ${authDir}
remote-management: { secret-key: ${KEY} }
providers:
  primary: { kind: mock, models: [demo-model], options: { latency_ms: 3 } }
  secondary: { kind: mock, models: [demo-model], options: { latency_ms: 12, fail_every: 5 } }
metrics: { enabled: false }
`);
after(async () => {
  await gateway.close();
  await rm(authDir, { recursive: true, force: true });
});

async function traffic(n: number) {
  for (let i = 0; i < n; i++) {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' },
      body: JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: `request ${i}` }] }),
    });
    await response.arrayBuffer();
  }
}

describe('dashboard sign-in', () => {
  test('without a session the dashboard is the sign-in form (401); a wrong key stays there', async () => {
    const page = await fetch(`${gateway.url}/dashboard`);
    assert.equal(page.status, 401);
    assert.match(await page.text(), /<label for="key">Management key<\/label>/);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'nonce-/);
    const wrong = await fetch(`${gateway.url}/dashboard/login`, {
      method: 'POST',
      body: new URLSearchParams({ key: 'nope' }),
      redirect: 'manual',
    });
    assert.equal(wrong.status, 401);
    assert.match(await wrong.text(), /not the management key/);
  });

  test('the right key opens an HttpOnly, SameSite=Strict session that the operations API accepts; sign-out ends it', async () => {
    const login = await fetch(`${gateway.url}/dashboard/login`, {
      method: 'POST',
      body: new URLSearchParams({ key: KEY }),
      redirect: 'manual',
    });
    assert.equal(login.status, 303);
    const cookie = login.headers.get('set-cookie') ?? '';
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    const session = cookie.split(';')[0]!;
    assert.equal((await fetch(`${gateway.url}/dashboard`, { headers: { cookie: session } })).status, 200);
    assert.equal((await fetch(`${gateway.url}/v0/operations/providers/status`, { headers: { cookie: session } })).status, 200);
    await fetch(`${gateway.url}/dashboard/logout`, { method: 'POST', headers: { cookie: session }, redirect: 'manual' });
    assert.equal((await fetch(`${gateway.url}/v0/operations/providers/status`, { headers: { cookie: session } })).status, 401);
  });
});

const chromium = requireChromium();
test('in Chromium: sign in, see providers, traffic and decisions, cool a provider down from the page', {
  skip: chromium.skip,
  timeout: 60_000,
}, async () => {
  if (!chromium.available) return;
  const { chromium: launcher } = await import('playwright-core');
  await traffic(30);
  const browser = await launcher.launch({ executablePath: chromium.executablePath, args: chromium.args });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      // The sign-in page is a 401 and credentials may be absent (404): the browser logs both as failed loads.
      if (message.type() === 'error' && !/status of (401|404)/.test(message.text())) errors.push(message.text());
    });
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel('Management key').fill(KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('body[data-ready="true"]');
    assert.equal(await page.locator('#providers tr[data-provider]').count(), 2);
    assert.match((await page.locator('#strategy').textContent()) ?? '', /round_robin/);
    assert.ok((await page.locator('#decisions tr').count()) >= 1);
    assert.ok(Number(await page.locator('#chart-rate').getAttribute('data-max')) >= 1, 'the rate chart has data');
    await page.getByRole('button', { name: 'Cool primary down for 5 minutes' }).click();
    // Locators, not page-evaluated predicates: the page's CSP (rightly) forbids eval.
    const countdown = (text: RegExp) => page.locator('.countdown[data-provider="primary"]').filter({ hasText: text }).waitFor();
    await countdown(/left \(manual: dashboard\)/);
    assert.ok(gateway.cooldowns.isCooling('primary'));
    await traffic(10);
    await page.waitForTimeout(2200);
    // The README's picture is refreshed on request only, so a test run leaves the tree clean.
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      await mkdir(fileURLToPath(new URL('../../../../docs/', import.meta.url)), { recursive: true });
      await page.screenshot({ path: fileURLToPath(new URL('../../../../docs/dashboard.png', import.meta.url)), fullPage: true });
    }
    await page.getByRole('button', { name: 'End the cooldown of primary now' }).click();
    await countdown(/none/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test("in Chromium: the gateway's address opens a page whose Dashboard link leads to the sign-in; metrics are shown off", {
  skip: chromium.skip,
  timeout: 60_000,
}, async () => {
  if (!chromium.available) return;
  const { chromium: launcher } = await import('playwright-core');
  const browser = await launcher.launch({ executablePath: chromium.executablePath, args: chromium.args });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 401/.test(message.text())) errors.push(message.text());
    });
    await page.goto(`${gateway.url}/`);
    assert.equal(await page.title(), 'Switchyard gateway');
    assert.match((await page.locator('main').textContent()) ?? '', /Metrics: off/);
    await page.getByRole('link', { name: 'Health' }).waitFor();
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.getByLabel('Management key').waitFor();
    assert.match(page.url(), /\/dashboard$/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

/** A form body one byte over the limit, `key=` first so a reader that took it whole would find a (wrong) key. */
const oversizedForm = () => `key=${'k'.repeat(CONTROL_PLANE_BODY_LIMIT)}`;

describe('control-plane request bodies', () => {
  // The last suite of the file. fetch keeps its connections as long as the gateway's keep-alive hint says (65 s), and
  // the gateway holds its end of them until then: the file-level after() that closes the gateway runs only once
  // nothing holds the event loop, so without this the file sat idle for a minute after its last test.
  after(async () => {
    const { getGlobalDispatcher } = await import('undici');
    await getGlobalDispatcher().close();
  });
  test('a sign-in form larger than the limit is refused with 413 before any key is checked', async () => {
    const response = await fetch(`${gateway.url}/dashboard/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: oversizedForm(),
      redirect: 'manual',
    });
    assert.equal(response.status, 413);
    const body = (await response.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'payload_too_large');
  });

  test('a chunked body without a declared length is cut off at the limit too', async () => {
    const chunk = new TextEncoder().encode('k'.repeat(256 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > CONTROL_PLANE_BODY_LIMIT * 2) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${gateway.url}/dashboard/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: stream,
      duplex: 'half',
      redirect: 'manual',
    } as RequestInit);
    assert.equal(response.status, 413);
    await response.arrayBuffer();
  });

  test('a management body under the limit still reaches its route', async () => {
    const response = await fetch(`${gateway.url}/v0/management/api-call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:1/', data: 'x'.repeat(512 * 1024) }),
    });
    // The route ran: it refused the loopback destination itself.
    assert.equal(response.status, 403);
    const body = (await response.json()) as { error: { details: { range: string } } };
    assert.equal(body.error.details.range, 'loopback');
  });

  test('a body a route leaves unread (refused before it reads) keeps the connection for the next request', async () => {
    const client = new Client(gateway.url, { pipelining: 1 });
    let connections = 0;
    client.on('connect', () => connections++);
    try {
      for (let i = 0; i < 30; i++) {
        const response = await client.request({
          path: '/v0/management/api-call',
          method: 'POST',
          headers: { authorization: 'Bearer wrong-key', 'content-type': 'application/json' },
          body: JSON.stringify({ url: 'http://127.0.0.1:1/', data: 'x'.repeat(64 * 1024) }),
        });
        // 401, then 429 once the wrong key is locked out: refused before the body is read either way.
        assert.ok(response.statusCode === 401 || response.statusCode === 429, String(response.statusCode));
        await response.body.arrayBuffer();
        // Node drains an unread body after the answer; give it the moment a client's next request would.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(connections, 1, 'every request went over the first connection');
    } finally {
      await client.close();
    }
  });
});
