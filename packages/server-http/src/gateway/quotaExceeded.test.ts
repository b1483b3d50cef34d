import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  eventually,
  FAKE_USAGE,
  type FakeBehaviour,
  type FakeOpenAi,
  type ReceivedRequest,
  startFakeOpenAi,
} from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';
import type { Gateway } from './gateway.js';

const dir = await mkdtemp(join(tmpdir(), 'quota-exceeded-'));
const gateways: Gateway[] = [];
const fakes: FakeOpenAi[] = [];
after(async () => {
  for (const gateway of gateways) await gateway.close();
  for (const fake of fakes) await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const KEY = 'mgmt-quota';
const QUOTA_429: FakeBehaviour = {
  type: 'status',
  status: 429,
  body: { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } },
};
const tokenOf = (r: ReceivedRequest) => String(r.headers.authorization ?? '').replace(/^Bearer /, '');
/** The relayed calls (health probes are GETs). */
const posts = (fake: FakeOpenAi) => fake.requests.filter((r) => r.method === 'POST');

async function start(_name: string, yaml: string) {
  const { gateway, path } = await startTestGateway(yaml);
  gateways.push(gateway);
  const chat = (model = 'gpt-4o') =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
  const manage = (route: string, method = 'GET', body?: unknown) =>
    fetch(`${gateway.url}/v0/management${route}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  return { gateway, path, chat, manage };
}

test('quota-exceeded toggles: flipped through the management API, the relay acts on them at once, without a restart', async () => {
  // Keys a and c are out of quota; key b is not (yet).
  const fake = await startFakeOpenAi({ behaviour: (r) => (tokenOf(r) === 'tok-b' ? { type: 'ok' } : QUOTA_429) });
  fakes.push(fake);
  const { gateway, path, chat, manage } = await start(
    'toggles',
    `
port: 0
remote-management: { secret-key: ${KEY} }
quota-exceeded:
  switch-project: false # as the operator wrote it
  switch-preview-model: false
auth: { selection_strategy: priority }
server: { operations: { cache: { enabled: false } } } # every request goes upstream
providers:
  keyed:
    kind: openai-compatible
    base_url: ${fake.url}
    models: [gpt-4o]
    preview_models: [gpt-4o-preview]
    health_check: { enabled: false }
metrics: { enabled: false }
`,
  );
  const { manager } = gateway.credentials;
  await manager.add({ id: 'a', provider: 'keyed', type: 'api_key', token: 'tok-a', priority: 0 });
  await manager.add({ id: 'c', provider: 'keyed', type: 'api_key', token: 'tok-c', priority: 1 });
  await manager.add({ id: 'b', provider: 'keyed', type: 'api_key', token: 'tok-b', priority: 2 });

  // switch-project off: the quota 429 comes back; no other key is tried.
  const refused = await chat();
  assert.equal(refused.status, 429);
  assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'quota_exceeded');
  assert.deepEqual(posts(fake).map(tokenOf), ['tok-a']);
  // ... and the provider stays on that key: refused here, without a call upstream.
  assert.equal((await chat()).status, 429);
  assert.equal(posts(fake).length, 1);

  // Flipped on: within one request, c is refused too and b answers.
  const on = await manage('/quota-exceeded/switch-project', 'PUT', { value: true });
  assert.deepEqual(await on.json(), { 'switch-project': true });
  assert.match(await readFile(path, 'utf8'), /switch-project: true # as the operator wrote it/);
  const rotated = await chat();
  assert.equal(rotated.status, 200);
  assert.deepEqual(posts(fake).map(tokenOf), ['tok-a', 'tok-c', 'tok-b']);

  // Now b is out of quota for gpt-4o as well. Preview model off: 429.
  fake.setBehaviour((r) => (tokenOf(r) !== 'tok-b' || r.body?.model === 'gpt-4o' ? QUOTA_429 : { type: 'ok' }));
  const noPreview = await chat();
  assert.equal(noPreview.status, 429);
  assert.ok(posts(fake).every((r) => r.body?.model === 'gpt-4o'));

  // Preview model on (PATCH): one retry with gpt-4o-preview, on the key the upstream refused for gpt-4o only.
  const patched = await manage('/quota-exceeded/switch-preview-model', 'PATCH', { value: true });
  assert.deepEqual(await patched.json(), { 'switch-preview-model': true });
  const preview = await chat();
  assert.equal(preview.status, 200);
  assert.equal(((await preview.json()) as { model: string }).model, 'gpt-4o-preview');
  const last = posts(fake).at(-1)!;
  assert.deepEqual([last.body?.model, tokenOf(last)], ['gpt-4o-preview', 'tok-b']);

  // Off again by editing the file (hot reload): no preview retry.
  await writeFile(path, (await readFile(path, 'utf8')).replace('switch-preview-model: true', 'switch-preview-model: false'));
  await eventually('the edit to apply', () => !gateway.config()['quota-exceeded']['switch-preview-model']);
  const before = posts(fake).length;
  assert.equal((await chat()).status, 429);
  assert.equal(posts(fake).length, before, 'every key is held out for gpt-4o, and no preview model is tried');
});

test('quota updates reach the routing table: quota_aware sends traffic to the provider with the most quota left', async () => {
  const fake = await startFakeOpenAi({});
  fakes.push(fake);
  const block = (name: string) =>
    `  ${name}:\n    kind: openai-compatible\n    base_url: ${fake.url}\n    models: [gpt-4o]\n    health_check: { enabled: false }\n`;
  const { gateway, chat } = await start(
    'quota-aware',
    `
port: 0
remote-management: { secret-key: ${KEY} }
server: { operations: { load_balancing: { strategy: quota_aware }, cache: { enabled: false } } }
providers:
${block('small')}${block('large')}
metrics: { enabled: false }
`,
  );
  const perRequest = FAKE_USAGE.input + FAKE_USAGE.output;
  await gateway.credentials.manager.add({
    id: 'small-key',
    provider: 'small',
    type: 'api_key',
    token: 'tok-small',
    quota: { limit: 1000 },
  });
  await gateway.credentials.manager.add({
    id: 'large-key',
    provider: 'large',
    type: 'api_key',
    token: 'tok-large',
    quota: { limit: 1000 + 2 * perRequest },
  });
  const remaining = async () => {
    const status = (await (
      await fetch(`${gateway.url}/v0/operations/load_balancing/status`, { headers: { authorization: `Bearer ${KEY}` } })
    ).json()) as { candidates: { id: string; remaining_quota: number | null }[] };
    return Object.fromEntries(status.candidates.map((c) => [c.id, c.remaining_quota]));
  };
  assert.deepEqual(await remaining(), { small: 1000, large: 1000 + 2 * perRequest });
  for (let i = 0; i < 2; i++) assert.equal((await chat()).status, 200);
  // Both went to `large`, which now has exactly as much left as `small`.
  assert.deepEqual(posts(fake).map(tokenOf), ['tok-large', 'tok-large']);
  assert.deepEqual(await remaining(), { small: 1000, large: 1000 });
  // From a tie, the two take turns: whichever serves next has less left than the other.
  await chat();
  await chat();
  assert.deepEqual(new Set(posts(fake).slice(2).map(tokenOf)), new Set(['tok-small', 'tok-large']));
  assert.deepEqual(await remaining(), { small: 1000 - perRequest, large: 1000 - perRequest });
});
