import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { generateEncryptionKey } from '@switchyard/credentials';
import { eventually, requirePromtool } from '@switchyard/test-support';
import OpenAI from 'openai';
import { startTestGateway } from '../../test/startTestGateway.js';
import { ClusterUnavailableError } from './cluster.js';
import { parseConfig } from './config/load.js';
import { Gateway, UnsafeBindError } from './gateway.js';

const dir = await mkdtemp(join(tmpdir(), 'gateway-'));
const gateways: Gateway[] = [];
after(async () => {
  for (const gateway of gateways) await gateway.close();
  await rm(dir, { recursive: true, force: true });
});

const KEY = 'mgmt-secret';
const BASE_CONFIG = `
port: 0
api-keys: [sk-client]
remote-management:
  secret-key: ${KEY}
  trusted-proxies: [127.0.0.1]
providers:
  alpha:
    kind: mock
    models: [demo-model]
  beta:
    kind: mock
    models: [demo-model]
    headers: { x-secret-header: hush }
metrics:
  port: 0
logging:
  level: info
`;

async function start(text = BASE_CONFIG, _name = `config-${gateways.length}.yaml`) {
  const { gateway, path } = await startTestGateway(text);
  gateways.push(gateway);
  const call = (route: string, init: RequestInit & { key?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    if (init.key !== null) headers.set('authorization', `Bearer ${init.key ?? KEY}`);
    return fetch(`${gateway.url}${route}`, { ...init, headers });
  };
  /** A JSON request with the management key. */
  const send = (route: string, method: string, body?: unknown) =>
    call(route, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { gateway, path, call, send, client: new OpenAI({ apiKey: 'sk-client', baseURL: `${gateway.url}/v1`, maxRetries: 0 }) };
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are probed field by field
const json = async (response: Response) => (await response.json()) as Record<string, any>;

describe('gateway: the newcomer path', async () => {
  const { client, gateway } = await start();

  test('the official openai client gets answers, plain and streamed', async () => {
    const completion = await client.chat.completions.create({ model: 'demo-model', messages: [{ role: 'user', content: 'hello' }] });
    assert.match(completion.choices[0]?.message.content ?? '', /You said: hello/);
    const stream = await client.chat.completions.create({
      model: 'demo-model',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.match(text, /You said: stream please/);
  });

  test('GET / is a page linking the dashboard, /health, the metrics on their port and the API description', async () => {
    const home = await fetch(`${gateway.url}/`);
    assert.equal(home.status, 200);
    assert.match(home.headers.get('content-type') ?? '', /text\/html/);
    const text = await home.text();
    for (const href of ['/dashboard', '/health', '/openapi.json']) assert.match(text, new RegExp(`href="${href}"`));
    const metricsPort = gateway.observability.metricsServer!.address()!.port;
    const metricsHref = /href="(http:\/\/[^"]+\/metrics)"/.exec(text)?.[1];
    assert.equal(new URL(metricsHref!).port, String(metricsPort));
    assert.match(await (await fetch(metricsHref!)).text(), /^# HELP svc_/m, 'the metrics link works');
    assert.match(text, new RegExp(`${gateway.url}/v1`));
  });

  test('/health is public and says whether the gateway can serve', async () => {
    const body = await json(await fetch(`${gateway.url}/health`));
    assert.equal(body.status, 'ok');
    assert.equal(body.ready, true);
    assert.equal(body.readiness.providers_total, 2);
  });

  test('/openapi.json describes the control plane', async () => {
    const doc = await json(await fetch(`${gateway.url}/openapi.json`));
    for (const path of [
      '/v0/operations/providers/status',
      '/v0/operations/providers/{p}/cooldown',
      '/v0/management/config.yaml',
      '/health',
    ]) {
      assert.ok(doc.paths[path], `${path} missing`);
    }
  });

  test('metrics are served on their own port in a format promtool accepts', { skip: requirePromtool().skip }, async () => {
    const address = gateway.observability.metricsServer!.address()!;
    const text = await (await fetch(`http://127.0.0.1:${address.port}/metrics`)).text();
    assert.match(text, /svc_requests_total\{[^}]*provider="(alpha|beta)"/);
    const promtool = requirePromtool();
    if (promtool.available) promtool.checkMetrics(text);
  });
});

describe('gateway: management auth matrix', async () => {
  const { call } = await start();
  const closed = await start(BASE_CONFIG.replace(`secret-key: ${KEY}`, "secret-key: ''"));

  test('no secret key: every management and operations route is 404', async () => {
    for (const route of ['/v0/management/config', '/v0/operations/providers/status']) {
      const response = await closed.call(route);
      assert.equal(response.status, 404);
      assert.equal((await json(response)).error.code, 'not_found');
    }
  });

  test('401 with a wrong key in either header, 200 with the right one in either', async () => {
    assert.equal((await call('/v0/operations/providers/status', { key: 'nope' })).status, 401);
    assert.equal((await call('/v0/operations/providers/status', { key: null, headers: { 'x-management-key': 'nope' } })).status, 401);
    assert.equal((await call('/v0/operations/providers/status', { key: null })).status, 401);
    assert.equal((await call('/v0/operations/providers/status', { key: null, headers: { 'x-management-key': KEY } })).status, 200);
    assert.equal((await call('/v0/operations/providers/status')).status, 200);
  });

  test('403 for a non-local client when allow-remote is false', async () => {
    const response = await call('/v0/operations/providers/status', { headers: { 'x-forwarded-for': '203.0.113.50' } });
    assert.equal(response.status, 403);
    assert.equal((await json(response)).error.code, 'forbidden');
  });

  test('5 wrong keys lock the address out with 429 and Retry-After', async () => {
    const remote = { 'x-forwarded-for': '198.51.100.77' };
    const open = await start(BASE_CONFIG.replace('trusted-proxies: [127.0.0.1]', 'trusted-proxies: [127.0.0.1]\n  allow-remote: true'));
    for (let i = 0; i < 5; i++) assert.equal((await open.call('/v0/operations/alerts', { key: 'bad', headers: remote })).status, 401);
    const locked = await open.call('/v0/operations/alerts', { key: 'bad', headers: remote });
    assert.equal(locked.status, 429);
    assert.equal(locked.headers.get('retry-after'), '1800');
    assert.equal((await open.call('/v0/operations/alerts', { key: 'bad' })).status, 401, 'other addresses are not locked out');
    assert.equal((await open.call('/v0/operations/alerts', { headers: remote })).status, 200, 'the right key never is');
  });
});

describe('gateway: operations routes', async () => {
  const { call, client } = await start();

  test('providers/status has the documented record for every provider', async () => {
    await client.chat.completions.create({ model: 'demo-model', messages: [{ role: 'user', content: 'x' }] });
    const body = await json(await call('/v0/operations/providers/status'));
    for (const name of ['alpha', 'beta']) {
      const record = body.providers[name];
      for (const field of [
        'status',
        'in_cooldown',
        'last_check',
        'uptime_percent',
        'requests_last_minute',
        'errors_last_minute',
        'average_latency_ms',
      ]) {
        assert.ok(field in record, `${name}.${field}`);
      }
    }
  });

  test('a manual cooldown holds a provider out; recover brings it back; both show in cooldown/status', async () => {
    const response = await call('/v0/operations/providers/alpha/cooldown', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ duration: '5m', reason: 'maintenance' }),
    });
    assert.equal(response.status, 200);
    const period = await json(response);
    assert.equal(period.reason, 'maintenance', 'the reason given is the reason kept');
    const status = await json(await call('/v0/operations/cooldown/status'));
    assert.deepEqual(status.providers_in_cooldown, ['alpha']);
    assert.equal(status.cooldown_periods.alpha.reason, 'maintenance');
    assert.equal(status.cooldown_periods.alpha.kind, 'manual');
    assert.ok(status.cooldown_periods.alpha.remaining_seconds > 290);
    for (let i = 0; i < 6; i++) {
      // Distinct prompts: an identical one would be answered from the response cache.
      const raw = await client.chat.completions
        .create({ model: 'demo-model', messages: [{ role: 'user', content: `during cooldown ${i}` }] })
        .withResponse();
      assert.equal(raw.response.headers.get('x-switchyard-provider'), 'beta');
    }
    assert.deepEqual(await json(await call('/v0/operations/providers/alpha/recover', { method: 'POST' })), {
      provider: 'alpha',
      recovered: true,
    });
    assert.deepEqual((await json(await call('/v0/operations/cooldown/status'))).providers_in_cooldown, []);
  });

  test('unknown provider is 404 provider_not_found; a bad duration is 422 naming the field', async () => {
    const unknown = await call('/v0/operations/providers/nope/recover', { method: 'POST' });
    assert.equal(unknown.status, 404);
    assert.equal((await json(unknown)).error.code, 'provider_not_found');
    const bad = await call('/v0/operations/providers/alpha/cooldown', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ duration: 'forever' }),
    });
    assert.equal(bad.status, 422);
    assert.equal((await json(bad)).error.details.field, 'duration');
    const missing = await call('/v0/operations/providers/alpha/cooldown', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(missing.status, 422);
    const malformed = await call('/v0/operations/providers/alpha/cooldown', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{nope',
    });
    assert.equal(malformed.status, 400);
  });

  test('load_balancing/status and alerts answer in their shapes', async () => {
    const lb = await json(await call('/v0/operations/load_balancing/status'));
    assert.equal(lb.strategy, 'round_robin');
    assert.equal(typeof lb.counter, 'number');
    assert.ok(Array.isArray(lb.candidates));
    assert.ok(lb.last_decision === null || typeof lb.last_decision.id === 'string');
    const alerts = await json(await call('/v0/operations/alerts'));
    assert.equal(alerts.enabled, true);
    assert.ok(Array.isArray(alerts.rules));
  });
});

describe('gateway: management routes', async () => {
  const { call, path, gateway } = await start();

  test('/config is the running config with secrets redacted', async () => {
    const body = await json(await call('/v0/management/config'));
    assert.deepEqual(body['api-keys'], ['***']);
    assert.equal(body['remote-management']['secret-key'], '***');
    assert.equal(body.providers.beta.headers['x-secret-header'], '***');
    assert.ok(!JSON.stringify(body).includes(KEY));
    assert.ok(!JSON.stringify(body).includes('sk-client'));
  });

  test('PUT /config.yaml: invalid is 422 with every bad field and changes nothing; valid is applied and written', async () => {
    const before = await readFile(path, 'utf8');
    const bad = await call('/v0/management/config.yaml', {
      method: 'PUT',
      headers: { 'content-type': 'application/yaml' },
      body: 'port: -1\nproviders:\n  x:\n    kind: nope\n',
    });
    assert.equal(bad.status, 422);
    const fields = (await json(bad)).error.details.issues.map((d: { field: string }) => d.field);
    assert.ok(fields.includes('port'));
    assert.equal(await readFile(path, 'utf8'), before);
    const next = before.replace('models: [demo-model]\n  beta:', 'models: [demo-model, extra-model]\n  beta:');
    const ok = await call('/v0/management/config.yaml', { method: 'PUT', headers: { 'content-type': 'application/yaml' }, body: next });
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.deepEqual(await json(ok), { ok: true, persisted: true, restart_needed: [], dry_run: false });
    assert.equal(await readFile(path, 'utf8'), next);
    assert.equal(await (await call('/v0/management/config.yaml')).text(), next);
    assert.ok(gateway.relay.models().some((m) => m.id === 'extra-model'));
  });

  test('PUT /config.yaml without a secret-key is 409 and changes nothing: it would hide the API from its caller', async () => {
    const before = await readFile(path, 'utf8');
    // A partial config sent as JSON (which is YAML) is a whole config without remote-management.
    const partial = await call('/v0/management/config.yaml', {
      method: 'PUT',
      headers: { 'content-type': 'application/yaml' },
      body: '{"providers": {"alpha": {"kind": "mock", "models": ["demo-model"]}}}',
    });
    assert.equal(partial.status, 409);
    const error = (await json(partial)).error;
    assert.equal(error.code, 'conflict');
    assert.deepEqual(
      error.details.issues.map((d: { field: string }) => d.field),
      ['remote-management.secret-key'],
    );
    assert.equal(await readFile(path, 'utf8'), before);
    assert.equal((await call('/v0/management/config')).status, 200, 'the management API still answers');
  });

  test('quota-exceeded toggles: GET, PUT and PATCH in the documented shape, persisted to the file', async () => {
    assert.deepEqual(await json(await call('/v0/management/quota-exceeded/switch-project')), { 'switch-project': true });
    const put = await call('/v0/management/quota-exceeded/switch-project', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: false }),
    });
    assert.deepEqual(await json(put), { 'switch-project': false });
    assert.match(await readFile(path, 'utf8'), /switch-project: false/);
    const patch = await call('/v0/management/quota-exceeded/switch-preview-model', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: false }),
    });
    assert.deepEqual(await json(patch), { 'switch-preview-model': false });
    const bad = await call('/v0/management/quota-exceeded/switch-project', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: 'yes' }),
    });
    assert.equal(bad.status, 422);
  });

  test('/logs returns recent request lines; follow=true streams new ones as SSE', async () => {
    await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-model', messages: [] }),
    });
    const body = await json(await call('/v0/management/logs?lines=50'));
    const line = body.lines.find((l: { msg?: string }) => l.msg === 'request_success');
    assert.ok(line, 'a request_success line');
    for (const field of ['timestamp', 'level', 'provider', 'model', 'request_id', 'latency_ms', 'tokens']) assert.ok(field in line, field);
    const controller = new AbortController();
    const stream = await call('/v0/management/logs?lines=1&follow=true', { signal: controller.signal });
    assert.equal(stream.headers.get('content-type'), 'text/event-stream');
    const reader = stream.body!.getReader();
    await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: 'follow me' }] }),
    });
    let text = '';
    while (!/request_success[\s\S]*request_success/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    assert.match(text, /event: log/);
    const bad = await call('/v0/management/logs?lines=0');
    assert.equal(bad.status, 400);
  });
});

test('hot reload: an edit to the config file applies (no restart), and a bad edit is refused, keeping the running config', async () => {
  const logs: string[] = [];
  const { path, gateway } = await startTestGateway(BASE_CONFIG, { logDestination: { write: (line: string) => void logs.push(line) } });
  const text = await readFile(path, 'utf8');
  await writeFile(
    path,
    text.replace('strategy: round_robin', '').replace('models: [demo-model]\n  beta:', 'models: [demo-model, hot-model]\n  beta:'),
  );
  // Conditions, not deadlines: on a loaded machine the watcher's settle time stretches.
  await eventually('the edit to apply', () => gateway.relay.models().some((m) => m.id === 'hot-model'));
  await writeFile(path, 'port: "not a port"\n');
  await eventually('the bad edit to be read and refused', () =>
    logs.some((line) => line.includes('config_reload_rejected_keeping_running_config')),
  );
  assert.ok(
    gateway.relay.models().some((m) => m.id === 'hot-model'),
    'the running config stays',
  );
});

test('an open gateway (no api-keys) refuses a non-loopback host unless --insecure', async () => {
  const config = parseConfig('host: 0.0.0.0\nport: 0\nmetrics: { enabled: false }\n');
  await assert.rejects(Gateway.start({ config, logDestination: { write() {} } }), UnsafeBindError);
});

test('credentials in auth-dir: a 429 on one key rotates to the next, and the limited key waits out its cooldown', async () => {
  const seen: string[] = [];
  const upstream = createServer((req, res) => {
    const key = String(req.headers.authorization).replace('Bearer ', '');
    // Health probes (GET /models) are not the traffic under test.
    if (req.method === 'POST') seen.push(key);
    req.resume();
    req.on('end', () => {
      if (key === 'key-limited') {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '60' });
        res.end(JSON.stringify({ error: { message: 'rate limited', type: 'rate_limit_error' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'up-model',
          choices: [{ index: 0, message: { role: 'assistant', content: `answered with ${key}` }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const { gateway, client, call } = await start(
    `
port: 0
api-keys: [sk-client]
remote-management: { secret-key: ${KEY} }
auth: { selection_strategy: priority }
providers:
  keyed:
    kind: openai-compatible
    base_url: ${base}
    models: [up-model]
metrics: { enabled: false }
`,
    'credentials.yaml',
  );
  await gateway.credentials.manager.add({ id: 'limited', provider: 'keyed', type: 'api_key', token: 'key-limited', priority: 0 });
  await gateway.credentials.manager.add({ id: 'spare', provider: 'keyed', type: 'api_key', token: 'key-spare', priority: 5 });

  const first = await client.chat.completions.create({ model: 'up-model', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(first.choices[0]?.message.content, 'answered with key-spare');
  assert.deepEqual(seen, ['key-limited', 'key-spare'], 'the preferred key first, then the next one');

  const second = await client.chat.completions.create({ model: 'up-model', messages: [{ role: 'user', content: 'again' }] });
  assert.equal(second.choices[0]?.message.content, 'answered with key-spare');
  assert.deepEqual(seen, ['key-limited', 'key-spare', 'key-spare'], 'the limited key is not tried while it cools down');

  const limited = gateway.credentials.manager.describe('limited');
  assert.equal(limited.available, false, 'the limited key is out of rotation');
  assert.ok(limited.cooldown_until && Date.parse(limited.cooldown_until) - Date.now() > 50_000, 'for the upstream Retry-After (60 s)');
  const spare = gateway.credentials.manager.describe('spare');
  assert.equal(spare.quota.used, 14, 'usage (7 tokens a request) is counted against the key that answered');
  const metrics = await call('/v0/management/config');
  assert.doesNotMatch(await metrics.text(), /key-limited|key-spare/, 'tokens never appear in API output');
});

test('a cluster whose database cannot be reached refuses to start, naming it without its password', async () => {
  const config = parseConfig(
    JSON.stringify({
      port: 0,
      metrics: { enabled: false },
      auth: { encryption: { enabled: true, key: generateEncryptionKey() } },
      cluster: { enabled: true, database_url: 'postgres://postgres:hunter2@127.0.0.1:1/none' },
    }),
  );
  await assert.rejects(Gateway.start({ config, logDestination: { write() {} } }), (error: Error) => {
    assert.ok(error instanceof ClusterUnavailableError);
    assert.match(error.message, /postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/none/);
    assert.doesNotMatch(error.message, /hunter2/);
    return true;
  });
});

test('/v0/management/auths: add, list, change, refresh, quota and delete, with tokens never in an answer', async () => {
  const { call, send, gateway } = await start(BASE_CONFIG, 'auths.yaml');

  const added = await send('/v0/management/auths', 'POST', {
    id: 'alpha-1',
    provider: 'alpha',
    type: 'api_key',
    token: 'sk-hidden-one',
    quota: { limit: 1000 },
  });
  assert.equal(added.status, 201);
  const addedText = await added.text();
  assert.doesNotMatch(addedText, /sk-hidden-one/, 'the token is not echoed');
  assert.equal(JSON.parse(addedText).id, 'alpha-1');
  assert.equal(
    (await send('/v0/management/auths', 'POST', { id: 'alpha-2', provider: 'alpha', type: 'api_key', token: 'sk-hidden-two' })).status,
    201,
  );

  const duplicate = await send('/v0/management/auths', 'POST', { id: 'alpha-1', provider: 'alpha', type: 'api_key', token: 'x' });
  assert.equal(duplicate.status, 409);
  const invalid = await send('/v0/management/auths', 'POST', { provider: 'alpha', type: 'password', token: '' });
  assert.equal(invalid.status, 422);
  assert.equal((await json(invalid)).error.code, 'validation_failed');

  const listed = await call('/v0/management/auths/alpha');
  const listedText = await listed.text();
  assert.doesNotMatch(listedText, /sk-hidden/, 'no token in a listing');
  assert.deepEqual(
    JSON.parse(listedText).auths.map((a: { id: string }) => a.id),
    ['alpha-1', 'alpha-2'],
  );
  const everyAlpha = async () =>
    ((await json(await call('/v0/management/auths'))).auths as { provider: string }[]).filter((a) => a.provider === 'alpha');
  assert.equal((await everyAlpha()).length, 2);

  const ambiguous = await send('/v0/management/auths/alpha', 'PUT', { priority: 3 });
  assert.equal(ambiguous.status, 409, 'two credentials and no ?id=');
  assert.deepEqual((await json(ambiguous)).error.details.ids, ['alpha-1', 'alpha-2']);
  const changed = await send('/v0/management/auths/alpha?id=alpha-2', 'PUT', { priority: 3 });
  assert.equal(changed.status, 200);
  assert.equal((await json(changed)).priority, 3);
  assert.equal(gateway.credentials.manager.describe('alpha-2').priority, 3);

  const refresh = await send('/v0/management/auths/alpha/refresh?id=alpha-1', 'POST');
  assert.equal(refresh.status, 409, 'an API key is not refreshable');
  assert.equal((await call('/v0/management/auths/refresh/status')).status, 200);

  const quota = await json(await call('/v0/management/auths/alpha/quota'));
  assert.equal(quota.provider, 'alpha');
  assert.equal(quota.credentials.length, 2);
  assert.equal((await send('/v0/management/auths/alpha/quota', 'PUT', { limit: 500 })).status, 409, 'two credentials and no ?id=');
  const badLimit = await send('/v0/management/auths/alpha/quota?id=alpha-1', 'PUT', { limit: -1 });
  assert.equal(badLimit.status, 422);
  assert.match(JSON.stringify(await json(badLimit)), /limit/, 'the error names the field');
  const limited = await json(await send('/v0/management/auths/alpha/quota?id=alpha-1', 'PUT', { limit: 500 }));
  assert.equal(limited.provider, 'alpha');
  assert.equal(limited.credentials.find((q: { id: string }) => q.id === 'alpha-1').limit, 500);
  assert.equal(gateway.credentials.manager.describe('alpha-1').quota?.limit, 500);
  const lifted = await json(await send('/v0/management/auths/alpha/quota?id=alpha-1', 'PUT', { limit: null }));
  assert.equal(lifted.credentials.find((q: { id: string }) => q.id === 'alpha-1').limit, null);

  assert.equal((await send('/v0/management/auths/alpha?id=nope', 'DELETE')).status, 404);
  const deleted = await send('/v0/management/auths/alpha?id=alpha-1', 'DELETE');
  assert.deepEqual(await json(deleted), { deleted: 'alpha-1' });
  const single = await send('/v0/management/auths/alpha', 'DELETE');
  assert.deepEqual(await json(single), { deleted: 'alpha-2' }, 'the only one left needs no ?id=');
  assert.equal((await everyAlpha()).length, 0);
  assert.equal((await call('/v0/management/auths', { key: null })).status, 401);
});

test('/v0/management/auth-files: list with auth_index, add (mode 0600), disable and enable, delete; contents never listed', async () => {
  const authDir = await mkdtemp(join(tmpdir(), 'auth-files-'));
  after(() => rm(authDir, { recursive: true, force: true }));
  const { call, send, gateway } = await start(BASE_CONFIG.replace('port: 0', `port: 0\nauth-dir: ${authDir}`), 'auth-files.yaml');

  const added = await send('/v0/management/auth-files', 'POST', {
    id: 'beta-key',
    provider: 'beta',
    type: 'api_key',
    token: 'sk-file-secret',
  });
  assert.equal(added.status, 201);
  const file = await json(added);
  assert.equal(file.name, 'beta-key.json');
  assert.equal(file.disabled, false);
  assert.ok(file.size > 0);
  assert.equal((await stat(join(authDir, 'beta-key.json'))).mode & 0o777, 0o600, 'credential files are mode 0600');
  await send('/v0/management/auth-files', 'POST', { id: 'alpha-key', provider: 'alpha', type: 'api_key', token: 'sk-file-other' });

  const listing = await call('/v0/management/auth-files');
  const text = await listing.text();
  assert.doesNotMatch(text, /sk-file/, 'no token in the listing');
  const { files } = JSON.parse(text) as { files: { name: string; auth_index: number; provider: string }[] };
  assert.deepEqual(
    files.map((f) => [f.auth_index, f.name, f.provider]),
    [
      [0, 'alpha-key.json', 'alpha'],
      [1, 'beta-key.json', 'beta'],
    ],
  );

  const disabled = await send('/v0/management/auth-files/status', 'PATCH', { name: 'beta-key.json', disabled: true });
  assert.equal((await json(disabled)).disabled, true);
  assert.equal(gateway.credentials.manager.describe('beta-key').status, 'disabled');
  const enabled = await send('/v0/management/auth-files/status', 'PATCH', { name: 'beta-key.json', disabled: false });
  assert.equal((await json(enabled)).status, 'active');

  assert.equal(
    (await send('/v0/management/auth-files/status', 'PATCH', { name: '../etc/passwd', disabled: true })).status,
    422,
    'paths are refused',
  );
  assert.equal((await send('/v0/management/auth-files?name=missing.json', 'DELETE')).status, 404);
  assert.deepEqual(await json(await send('/v0/management/auth-files?name=beta-key.json', 'DELETE')), { deleted: 'beta-key.json' });
  await assert.rejects(stat(join(authDir, 'beta-key.json')), 'the file is gone');
});

test('/v0/management/api-call: $TOKEN$ from auth_index, loopback refused unless allowed, the answer relayed', async () => {
  const usage = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-usage': 'yes' });
    res.end(JSON.stringify({ path: req.url, saw_token: req.headers.authorization === 'Bearer sk-usage-secret' }));
  });
  await new Promise<void>((resolve) => usage.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => usage.close(() => resolve())));
  const target = `http://127.0.0.1:${(usage.address() as AddressInfo).port}/usage`;
  const authDir = await mkdtemp(join(tmpdir(), 'api-call-'));
  after(() => rm(authDir, { recursive: true, force: true }));
  const config = (allow: string) =>
    BASE_CONFIG.replace('port: 0', `port: 0\nauth-dir: ${authDir}`).replace(
      'trusted-proxies: [127.0.0.1]',
      `trusted-proxies: [127.0.0.1]\n  api-call-allow: ${allow}`,
    );
  const { send, gateway, path } = await start(config('[]'), 'api-call.yaml');
  await gateway.credentials.manager.add({ id: 'usage-key', provider: 'alpha', type: 'api_key', token: 'sk-usage-secret' });
  const body = { auth_index: 0, url: target, header: { authorization: 'Bearer $TOKEN$' } };

  const refused = await send('/v0/management/api-call', 'POST', body);
  assert.equal(refused.status, 403, 'loopback is refused by default');
  assert.equal((await json(refused)).error.details.range, 'loopback');
  assert.equal((await send('/v0/management/api-call', 'POST', { url: 'file:///etc/passwd' })).status, 422);
  assert.equal((await send('/v0/management/api-call', 'POST', { url: target, data: '$TOKEN$' })).status, 422, '$TOKEN$ needs auth_index');
  assert.equal((await send('/v0/management/api-call', 'POST', { ...body, auth_index: 9 })).status, 404);

  await writeFile(path, config('[127.0.0.1]'));
  await eventually('the allow-list edit to apply', () => gateway.config()['remote-management']['api-call-allow'].length > 0);
  const allowed = await send('/v0/management/api-call', 'POST', body);
  assert.equal(allowed.status, 200);
  const result = await json(allowed);
  assert.equal(result.status_code, 200);
  assert.deepEqual(result.header['x-usage'], ['yes']);
  assert.deepEqual(JSON.parse(result.body), { path: '/usage', saw_token: true });
  assert.doesNotMatch(JSON.stringify(result), /sk-usage-secret/);
});

describe('gateway: a reload names what needs a restart', async () => {
  const { gateway } = await start();

  test('the sealing key and the log destination are read at start; the log level applies at once', () => {
    const key = 'ab'.repeat(32);
    const changed = parseConfig(
      BASE_CONFIG.replace('logging:\n  level: info', `logging:\n  level: debug\n  output: file\n  file: ${join(dir, 'other.log')}`) +
        `auth:\n  encryption: { enabled: true, key: '${key}' }\n`,
    );
    const { restartNeeded } = gateway.reload(changed);
    assert.deepEqual(restartNeeded.sort(), ['auth.encryption', 'logging.file', 'logging.output']);
    assert.equal(gateway.observability.logger.level, 'debug');
    // Changed back: the running process already has these values, so nothing needs a restart.
    assert.deepEqual(gateway.reload(parseConfig(BASE_CONFIG)).restartNeeded, []);
  });

  test('a pending restart stays reported through later reloads until the change is undone', () => {
    const moved = BASE_CONFIG.replace('port: 0', 'port: 1');
    assert.deepEqual(gateway.reload(parseConfig(moved)).restartNeeded, ['port']);
    // Another edit after it: the port change has still not been applied.
    const alsoDebug = moved.replace('level: info', 'level: debug');
    assert.deepEqual(gateway.reload(parseConfig(alsoDebug)).restartNeeded, ['port']);
    assert.equal(gateway.observability.logger.level, 'debug');
    assert.deepEqual(gateway.reload(parseConfig(BASE_CONFIG)).restartNeeded, []);
  });

  test('adding or removing a provider without an oauth block needs no restart', () => {
    const added = parseConfig(BASE_CONFIG.replace('metrics:\n', '  gamma:\n    kind: mock\n    models: [demo-model]\nmetrics:\n'));
    assert.deepEqual(gateway.reload(added).restartNeeded, []);
    assert.deepEqual(Object.keys(gateway.config().providers), ['alpha', 'beta', 'gamma']);
    assert.deepEqual(gateway.reload(parseConfig(BASE_CONFIG)).restartNeeded, []);
  });

  test('the tracer, the notifiers, the alert loop and the quota batching are built at start: changing them asks for a restart', () => {
    const changed = parseConfig(
      `${BASE_CONFIG}tracing: { enabled: true, sample_rate: 1 }\n` +
        'notifications: { chat: { enabled: true, webhook_url: "https://chat.example/hook" } }\n' +
        'alerts: { evaluation_interval: 5s }\n' +
        'server: { operations: { load_balancing: { latency_window: 1m }, batch_processing: { max_batch_size: 50 } } }\n',
    );
    const expected = [
      'alerts.evaluation_interval',
      'notifications',
      'server.operations.batch_processing',
      'server.operations.load_balancing.latency_window',
      'tracing',
    ];
    assert.deepEqual(gateway.reload(changed).restartNeeded.sort(), expected);
    assert.deepEqual(gateway.reload(parseConfig(BASE_CONFIG)).restartNeeded, []);
  });
});

describe('gateway: close', () => {
  test('may be called more than once, at once or later: every call resolves when the gateway is down', async () => {
    const { gateway } = await start();
    const url = gateway.url;
    await Promise.all([gateway.close(), gateway.close()]);
    await gateway.close();
    await assert.rejects(fetch(`${url}/health`));
  });
});

test('a request handler fault is logged with the path but without its query, where a Gemini client puts its key', async () => {
  const lines: string[] = [];
  const gateway = await Gateway.start({
    config: parseConfig('port: 0\nproviders:\n  alpha: { kind: mock, models: [demo-model] }\nmetrics: { enabled: false }\n'),
    logDestination: { write: (line: string) => void lines.push(line) },
  });
  gateways.push(gateway);
  gateway.dataPlane.handle = async () => {
    throw new Error('handler fault');
  };
  const response = await fetch(`${gateway.url}/v1beta/models/demo-model:generateContent?key=AIzaClientKey0123456789abcdef&alt=sse`, {
    method: 'POST',
    body: '{}',
  });
  assert.equal(response.status, 500);
  await response.arrayBuffer();
  await gateway.observability.logger.flush?.();
  const fault = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request_handler_failed');
  assert.ok(fault, 'the fault is logged');
  assert.equal(fault.path, '/v1beta/models/demo-model:generateContent');
  assert.ok(!lines.join('\n').includes('AIzaClientKey0123456789abcdef'));
});
