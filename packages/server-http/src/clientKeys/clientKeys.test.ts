/**
 * Runtime client keys through a running gateway: the management API (the secret shown once, never
 * again), the data plane's refusals in the client's own error shape (seen by the official `openai`
 * client as its typed errors), the file they live in (0600, kept over a restart), and the logs.
 */
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { after, describe, test } from 'node:test';
import type { RequestEndEvent } from '@switchyard/core-routing';
import OpenAI from 'openai';
import { startTestGateway } from '../../test/startTestGateway.js';
import { CLIENT_KEYS_FILE } from './fileClientKeyStore.js';

// biome-ignore lint/suspicious/noExplicitAny: the tests read the API's JSON freely; the routes' schemas type it
type Json = Record<string, any>;
const MANAGEMENT_KEY = 'client-keys-management-key';
const logs: string[] = [];
const logDestination = { write: (line: string) => void logs.push(line) };
const yaml = (dir: string) => `
port: 0
auth-dir: ${dir}/auths
api-keys: [{ key: sk-static-0123456789, name: ops }]
remote-management: { secret-key: ${MANAGEMENT_KEY} }
logging: { level: debug }
providers:
  alpha: { kind: mock, models: [demo-model, gpt-4o-mini, gpt-4o, claude-x] }
metrics: { enabled: false }
`;
const started = await startTestGateway(yaml, { logDestination });
let gateway = started.gateway;
after(() => gateway.close());

async function manage(method: string, path: string, body?: unknown) {
  const response = await fetch(`${gateway.url}/v0/management/client-keys${path}`, {
    method,
    headers: { authorization: `Bearer ${MANAGEMENT_KEY}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const openai = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
const ask = (apiKey: string, model = 'demo-model') =>
  openai(apiKey).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
const secrets: string[] = [];

async function create(body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const created = await manage('POST', '', body);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  secrets.push(created.body.secret);
  return { id: created.body.key.id, secret: created.body.secret };
}

describe('the management API', () => {
  test('a key is created with its limits; the secret is in that answer only', async () => {
    const created = await manage('POST', '', { name: 'alice', tenant: 'team-a', models: ['gpt-4o*'], requests_per_minute: 60 });
    assert.equal(created.status, 201);
    const { key, secret } = created.body;
    secrets.push(secret);
    assert.match(secret, /^sk-sy-[A-Za-z0-9_-]{43}$/);
    assert.match(key.id, /^ck_[0-9a-f]{16}$/);
    assert.deepEqual(
      { name: key.name, tenant: key.tenant, models: key.models, rpm: key.requests_per_minute, revoked: key.revoked },
      { name: 'alice', tenant: 'team-a', models: ['gpt-4o*'], rpm: 60, revoked: false },
    );
    assert.equal(key.secret_digest, undefined);
    const listed = await manage('GET', '');
    const got = await manage('GET', `/${key.id}`);
    for (const answer of [listed, got]) {
      assert.equal(answer.status, 200);
      assert.ok(!JSON.stringify(answer.body).includes(secret.slice(10)), 'no part of the secret past its hint');
      assert.ok(!JSON.stringify(answer.body).includes('secret_digest'));
    }
    assert.ok(listed.body.keys.some((k: { id: string }) => k.id === key.id));
  });

  test('bad input is 422 validation_failed naming the field; an unknown id 404; a bad query 400', async () => {
    const bad = await manage('POST', '', { name: 'x', requests_per_minute: -1 });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.code, 'validation_failed');
    assert.equal(bad.body.error.details.field, 'requests_per_minute');
    const budget = await manage('POST', '', { name: 'x', budget: { limit: 10, unit: 'dollars', period: 'daily' } });
    assert.equal(budget.status, 422);
    assert.equal(budget.body.error.details.field, 'budget.unit');
    assert.equal((await manage('GET', '/ck_0000000000000000')).status, 404);
    assert.equal((await manage('GET', '?revoked=maybe')).body.error.code, 'bad_request');
  });

  test('PATCH changes limits; null clears one', async () => {
    const { id } = await create({ name: 'patchy', requests_per_minute: 5 });
    const patched = await manage('PATCH', `/${id}`, { requests_per_minute: null, tokens_per_minute: 1000, name: 'patched' });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.requests_per_minute, null);
    assert.equal(patched.body.tokens_per_minute, 1000);
    assert.equal(patched.body.name, 'patched');
  });
});

describe('the data plane', () => {
  test('a runtime key is served, and the relay events name it by id', async () => {
    const { id, secret } = await create({ name: 'bob', tenant: 'team-b' });
    const ends: RequestEndEvent[] = [];
    const listener = (event: RequestEndEvent) => ends.push(event);
    gateway.relay.events.on('request:end', listener);
    const answer = await ask(secret);
    gateway.relay.events.off('request:end', listener);
    assert.ok(answer.choices[0]?.message.content);
    assert.deepEqual(ends[0]?.client, { keyId: id, name: 'bob', tenant: 'team-b' });
    // The config's keys keep working beside them.
    assert.ok((await ask('sk-static-0123456789')).choices[0]);
  });

  test('a model outside the list is 403 model_not_allowed (PermissionDeniedError); a glob lets its matches through', async () => {
    const { secret } = await create({ name: 'narrow', models: ['gpt-4o*', 'demo-model'] });
    assert.ok((await ask(secret, 'gpt-4o-mini')).choices[0]);
    await assert.rejects(ask(secret, 'claude-x'), (error: unknown) => {
      assert.ok(error instanceof OpenAI.PermissionDeniedError, String(error));
      assert.equal(error.status, 403);
      assert.equal(error.code, 'model_not_allowed');
      return true;
    });
  });

  test('GET /v1/models lists only the models a key with a model list may use (names and globs)', async () => {
    const served = ['claude-x', 'demo-model', 'gpt-4o', 'gpt-4o-mini'];
    const listed = async (apiKey: string) => (await openai(apiKey).models.list()).data.map((model) => model.id).sort();
    const narrow = await create({ name: 'lister', models: ['gpt-4o*', 'demo-model', 'not-served'] });
    assert.deepEqual(await listed(narrow.secret), ['demo-model', 'gpt-4o', 'gpt-4o-mini']);
    assert.equal((await openai(narrow.secret).models.retrieve('gpt-4o-mini')).id, 'gpt-4o-mini');
    await assert.rejects(openai(narrow.secret).models.retrieve('claude-x'), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError, String(error));
      assert.equal(error.code, 'model_not_found');
      return true;
    });
    // Anthropic's and Gemini's lists are filtered alike.
    const gemini = await fetch(`${gateway.url}/v1beta/models?key=${narrow.secret}`);
    const names = ((await gemini.json()) as { models: { baseModelId: string }[] }).models.map((m) => m.baseModelId).sort();
    assert.deepEqual(names, ['demo-model', 'gpt-4o', 'gpt-4o-mini']);
    // A key without a list, and a static key, see every served model.
    assert.deepEqual(await listed((await create({ name: 'wide' })).secret), served);
    assert.deepEqual(await listed('sk-static-0123456789'), served);
  });

  test('over its request rate: 429 key_rate_limited with Retry-After, a RateLimitError to the openai client', async () => {
    const { secret } = await create({ name: 'rated', requests_per_minute: 2 });
    await ask(secret);
    await ask(secret);
    await assert.rejects(ask(secret), (error: unknown) => {
      assert.ok(error instanceof OpenAI.RateLimitError, String(error));
      assert.equal(error.code, 'key_rate_limited');
      const retryAfter = Number(error.headers?.get('retry-after'));
      // Two a minute: the next fits 30 s after the first.
      assert.ok(retryAfter >= 29 && retryAfter <= 30, `Retry-After ${retryAfter}`);
      return true;
    });
    // In Anthropic's shape on its route.
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': secret, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'demo-model', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 429);
    assert.ok(Number(response.headers.get('retry-after')) >= 29);
    assert.equal(((await response.json()) as { type: string }).type, 'error');
  });

  test('over its token budget: 429 key_budget_exceeded until the period ends', async () => {
    const { id, secret } = await create({ name: 'budgeted', budget: { limit: 5, unit: 'tokens', period: 'daily' } });
    await ask(secret);
    await assert.rejects(ask(secret), (error: unknown) => {
      assert.ok(error instanceof OpenAI.RateLimitError, String(error));
      assert.equal(error.code, 'key_budget_exceeded');
      const midnight = new Date();
      midnight.setUTCHours(24, 0, 0, 0);
      const expected = Math.ceil((midnight.getTime() - Date.now()) / 1000);
      assert.ok(Math.abs(Number(error.headers?.get('retry-after')) - expected) <= 5);
      return true;
    });
    const view = (await manage('GET', `/${id}`)).body;
    assert.ok(view.budget_use.used >= 5, JSON.stringify(view.budget_use));
    assert.match(view.budget_use.resets_at, /T00:00:00.000Z$/);
  });

  test('an expired key is 401 key_expired; a revoked key is an unknown key', async () => {
    const { id, secret } = await create({ name: 'old' });
    assert.ok((await ask(secret)).choices[0]);
    await manage('PATCH', `/${id}`, { expires_at: '2020-01-01T00:00:00Z' });
    await assert.rejects(ask(secret), (error: unknown) => {
      assert.ok(error instanceof OpenAI.AuthenticationError, String(error));
      assert.equal(error.code, 'key_expired');
      return true;
    });
    const other = await create({ name: 'gone' });
    assert.equal((await manage('POST', `/${other.id}/revoke`)).body.revoked, true);
    await assert.rejects(ask(other.secret), (error: unknown) => error instanceof OpenAI.AuthenticationError);
    assert.equal((await manage('PATCH', `/${other.id}`, { name: 'back' })).status, 409);
  });
});

describe('storage', () => {
  test('the file is 0600 and holds no secret; a restart keeps the keys and their state', async () => {
    const { id, secret } = await create({ name: 'survivor', requests_per_minute: 100 });
    const spender = await create({ name: 'spender', budget: { limit: 10, unit: 'requests', period: 'monthly' } });
    await ask(spender.secret);
    await ask(spender.secret);
    const revoked = await create({ name: 'revoked-before-restart' });
    await manage('DELETE', `/${revoked.id}`);
    const file = `${started.dir}/auths/${CLIENT_KEYS_FILE}`;
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(file, 'utf8');
    for (const s of secrets) assert.ok(!text.includes(s), 'no secret in the file');
    await gateway.close();
    const { Gateway } = await import('../gateway/gateway.js');
    const { parseConfig } = await import('../gateway/config/load.js');
    gateway = await Gateway.start({ config: parseConfig(yaml(started.dir)), configPath: started.path, logDestination });
    assert.equal((await manage('GET', `/${id}`)).body.name, 'survivor');
    assert.ok((await ask(secret)).choices[0]);
    assert.equal((await manage('GET', `/${spender.id}`)).body.budget_use.used, 2, 'the budget use survives the restart');
    await assert.rejects(ask(revoked.secret), (error: unknown) => error instanceof OpenAI.AuthenticationError);
  });

  test('no secret ever reaches the log', () => {
    const text = logs.join('');
    assert.ok(text.length > 0, 'the gateway logged');
    for (const s of secrets) assert.ok(!text.includes(s), 'a secret in the log');
  });
});
