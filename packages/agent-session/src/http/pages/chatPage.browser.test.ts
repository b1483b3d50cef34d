// Headless Chromium on /chat: send a message, see the reply, survive a dropped stream; dialogs as
// buttons; an ACP agent's plan, thought, tool call and permission request.
// UPDATE_SCREENSHOTS=1 saves docs/agent-chat.png and docs/agent-chat-acp.png for the README and docs.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { requireChromium } from '@switchyard/test-support';
import { type Browser, chromium } from 'playwright-core';
import { type AgentSessionServer, startAgentSessionServer } from '../../agentSessionServer.js';
import { DIALOG_AGENT } from '../testing/dialogAgent.js';

const browserBinary = requireChromium();
let server: AgentSessionServer | undefined;
let ended: AgentSessionServer | undefined;
let restarted: AgentSessionServer | undefined;
let guarded: AgentSessionServer | undefined;
let asking: AgentSessionServer | undefined;
let acp: AgentSessionServer | undefined;
let browser: Browser | undefined;
after(async () => {
  await browser?.close();
  await server?.close();
  await ended?.close();
  await restarted?.close();
  await guarded?.close();
  await asking?.close();
  await acp?.close();
});

const FAKE_ACP = fileURLToPath(new URL('../../../test/fixtures/fake-acp-agent.mjs', import.meta.url));

test('a message sent on /chat gets its reply; the page reconnects on its own', { skip: browserBinary.skip, timeout: 120_000 }, async () => {
  if (!browserBinary.available) return;
  server = await startAgentSessionServer({ command: 'python3', args: ['-i', '-q'], port: 0, stableWindowMs: 300 });
  browser = await chromium.launch({ executablePath: browserBinary.executablePath, args: browserBinary.args });
  const page = await browser.newPage({ viewport: { width: 900, height: 640 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${server.url}/chat`);

  await page.getByRole('status').filter({ hasText: 'Agent: ready' }).waitFor({ timeout: 30_000 });
  const input = page.getByLabel('Message', { exact: true });
  await input.fill('print(6 * 7)');
  await input.press('Enter');
  const log = page.getByRole('log', { name: 'Conversation' });
  await log.locator('li.user', { hasText: 'print(6 * 7)' }).waitFor({ timeout: 30_000 });
  await log.locator('li.agent .content', { hasText: /^42$/ }).waitFor({ timeout: 30_000 });
  assert.equal(await input.inputValue(), '', 'the box is cleared after sending');

  // The server cuts every stream: the page must come back by itself and keep working.
  await page.getByRole('status').filter({ hasText: 'Agent: ready' }).waitFor({ timeout: 30_000 });
  server.api.close();
  await page.locator('#connection[data-connection="connected"]').waitFor({ timeout: 30_000 });
  await input.fill('print("back again")');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await log.locator('li.agent .content', { hasText: /^back again$/ }).waitFor({ timeout: 30_000 });
  assert.equal(await log.locator('li').count(), 4, 'no message was duplicated by the reconnect');

  await page.getByRole('status').filter({ hasText: 'Agent: ready' }).waitFor({ timeout: 30_000 });
  if (process.env.UPDATE_SCREENSHOTS === '1') {
    await page.screenshot({ path: fileURLToPath(new URL('../../../../../docs/agent-chat.png', import.meta.url)) });
  }
  assert.deepEqual(problems, []);
});

test('an agent that has exited is shown as exited, not ready, also to a page opened after the exit', {
  skip: browserBinary.skip,
  timeout: 120_000,
}, async () => {
  if (!browserBinary.available) return;
  ended = await startAgentSessionServer({ command: 'python3', args: ['-i', '-q'], port: 0, stableWindowMs: 300 });
  browser ??= await chromium.launch({ executablePath: browserBinary.executablePath, args: browserBinary.args });
  const page = await browser.newPage();
  await page.goto(`${ended.url}/chat`);
  const status = page.getByRole('status');
  await status.filter({ hasText: 'Agent: ready' }).waitFor({ timeout: 30_000 });
  const input = page.getByLabel('Message', { exact: true });
  await input.fill('import sys; sys.exit(3)');
  await input.press('Enter');
  await status.filter({ hasText: 'Agent: exited (code 3)' }).waitFor({ timeout: 30_000 });
  const send = page.getByRole('button', { name: 'Send', exact: true });
  assert.equal(await send.getAttribute('aria-disabled'), 'true');
  await input.fill('print(1)');
  await input.press('Enter');
  await page.getByRole('alert').filter({ hasText: 'The agent has exited' }).waitFor({ timeout: 10_000 });

  await page.reload();
  await status.filter({ hasText: 'Agent: exited (code 3)' }).waitFor({ timeout: 30_000 });
  assert.equal(await send.getAttribute('aria-disabled'), 'true');
});

test('after the server restarts, the page shows the new session only, not the old one mixed in', {
  skip: browserBinary.skip,
  timeout: 120_000,
}, async () => {
  if (!browserBinary.available) return;
  const options = { command: 'python3', args: ['-i', '-q'], stableWindowMs: 300 };
  const first = await startAgentSessionServer({ ...options, port: 0 });
  restarted = first;
  browser ??= await chromium.launch({ executablePath: browserBinary.executablePath, args: browserBinary.args });
  const page = await browser.newPage();
  await page.goto(`${first.url}/chat`);
  const log = page.getByRole('log', { name: 'Conversation' });
  const input = page.getByLabel('Message', { exact: true });
  await page.getByRole('status').filter({ hasText: 'Agent: ready' }).waitFor({ timeout: 30_000 });
  for (const [content, reply] of [
    ['print(6 * 7)', /^42$/],
    ['print("old")', /^old$/],
  ] as const) {
    await input.fill(content);
    await input.press('Enter');
    await log.locator('li.agent .content', { hasText: reply }).waitFor({ timeout: 30_000 });
    await page.getByRole('status').filter({ hasText: 'Agent: ready' }).waitFor({ timeout: 30_000 });
  }

  await first.close();
  restarted = await startAgentSessionServer({ ...options, port: Number(new URL(first.url).port) });
  await page.locator('#connection[data-connection="connected"]').waitFor({ timeout: 30_000 });
  await page.getByRole('status').filter({ hasText: 'Agent: ready' }).waitFor({ timeout: 30_000 });
  await input.fill('print("new")');
  await input.press('Enter');
  await log.locator('li.agent .content', { hasText: /^new$/ }).waitFor({ timeout: 30_000 });
  assert.deepEqual(await log.locator('li .content').allTextContents(), ['print("new")', 'new']);
});

test('a key the server refuses is asked for again, not retried for good', { skip: browserBinary.skip, timeout: 120_000 }, async () => {
  if (!browserBinary.available) return;
  guarded = await startAgentSessionServer({ command: 'python3', args: ['-i', '-q'], port: 0, stableWindowMs: 300, apiKey: 'sk-right' });
  browser ??= await chromium.launch({ executablePath: browserBinary.executablePath, args: browserBinary.args });
  const page = await browser.newPage();
  const asked: string[] = [];
  page.on('dialog', (dialog) => {
    asked.push(dialog.message());
    void dialog.accept('sk-right');
  });
  await page.goto(`${guarded.url}/chat#key=sk-wrong`);
  await page.locator('#connection[data-connection="connected"]').waitFor({ timeout: 30_000 });
  assert.deepEqual(asked, ['The server did not accept the API key; enter it again']);
  await page.getByRole('status').filter({ hasText: 'Agent: ready' }).waitFor({ timeout: 30_000 });
  const input = page.getByLabel('Message', { exact: true });
  await input.fill('print(6 * 7)');
  await input.press('Enter');
  await page.getByRole('log', { name: 'Conversation' }).locator('li.agent .content', { hasText: /^42$/ }).waitFor({ timeout: 30_000 });
});

test('a dialog the agent shows is a set of buttons; a click answers it and the chat goes on', {
  skip: browserBinary.skip,
  timeout: 120_000,
}, async () => {
  if (!browserBinary.available) return;
  asking = await startAgentSessionServer({ command: process.execPath, args: ['-e', DIALOG_AGENT], port: 0, stableWindowMs: 300 });
  browser ??= await chromium.launch({ executablePath: browserBinary.executablePath, args: browserBinary.args });
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${asking.url}/chat`);
  const dialog = page.getByRole('group', { name: /Do you trust the files in this folder\?/ });
  await dialog.waitFor({ timeout: 30_000 });
  assert.deepEqual(await dialog.getByRole('button').allTextContents(), ['Yes, proceed', 'Yes, and remember this folder', 'No, exit']);

  const input = page.getByLabel('Message', { exact: true });
  await input.fill('hello');
  await input.press('Enter');
  await page.getByRole('alert').filter({ hasText: 'pick one of its options' }).waitFor({ timeout: 10_000 });
  assert.equal(await page.getByRole('log', { name: 'Conversation' }).locator('li.user').count(), 0, 'nothing was typed into the dialog');

  await dialog.getByRole('button', { name: 'Yes, and remember this folder' }).click();
  await dialog.waitFor({ state: 'hidden', timeout: 30_000 });
  await page.getByRole('status').filter({ hasText: 'Agent: ready' }).waitFor({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page
    .getByRole('log', { name: 'Conversation' })
    .locator('li.agent .content', { hasText: /^You said: hello$/ })
    .waitFor({ timeout: 30_000 });
  assert.deepEqual(problems, []);
});

test("an ACP agent's plan, thought and tool call show in the log; its permission request is a dialog of buttons", {
  skip: browserBinary.skip,
  timeout: 120_000,
}, async () => {
  if (!browserBinary.available) return;
  acp = await startAgentSessionServer({ transport: 'acp', command: process.execPath, args: [FAKE_ACP], port: 0, acpPermissions: 'ask' });
  browser ??= await chromium.launch({ executablePath: browserBinary.executablePath, args: browserBinary.args });
  const page = await browser.newPage({ viewport: { width: 900, height: 720 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${acp.url}/chat`);
  await page.getByRole('status').filter({ hasText: 'Agent: ready' }).waitFor({ timeout: 30_000 });
  const input = page.getByLabel('Message', { exact: true });
  await input.fill('write notes');
  await input.press('Enter');

  const log = page.getByRole('log', { name: 'Conversation' });
  const tool = log.locator('li.tool_call', { hasText: 'Write notes.txt' });
  await tool.locator('.badge', { hasText: 'waiting' }).waitFor({ timeout: 30_000 });
  const dialog = page.getByRole('group', { name: 'The agent asks for permission: Write notes.txt' });
  await dialog.waitFor({ timeout: 30_000 });
  assert.deepEqual(await dialog.getByRole('button').allTextContents(), ['Allow', 'Reject']);
  assert.deepEqual(await log.locator('li.plan .plan-entries li').allTextContents(), ['Write notes.txt', 'Report back']);
  assert.equal(await log.locator('li.thought pre').textContent(), 'The user wants a file.');
  assert.deepEqual(
    await log.locator('> li').evaluateAll((items) => items.map((item) => item.className)),
    ['user', 'activity plan', 'activity thought', 'activity tool_call'],
    'the activities follow the message that started the turn',
  );
  if (process.env.UPDATE_SCREENSHOTS === '1') {
    await page.screenshot({ path: fileURLToPath(new URL('../../../../../docs/agent-chat-acp.png', import.meta.url)) });
  }

  await dialog.getByRole('button', { name: 'Allow' }).click();
  await dialog.waitFor({ state: 'hidden', timeout: 30_000 });
  await tool.locator('.badge', { hasText: 'done' }).waitFor({ timeout: 30_000 });
  await log.locator('li.notice', { hasText: 'Answered: Write notes.txt (Allow)' }).waitFor({ timeout: 30_000 });
  await log.locator('li.agent .content', { hasText: /^permission granted$/ }).waitFor({ timeout: 30_000 });
  await tool.locator('summary', { hasText: 'Output' }).click();
  assert.equal(await tool.locator('pre').textContent(), 'wrote 12 bytes');
  assert.deepEqual(problems, []);
});
