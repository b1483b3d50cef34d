import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { type FakeUpstream, startFakeAnthropic, startFakeOpenAi } from '@switchyard/test-support';
import fc from 'fast-check';
import OpenAI from 'openai';
import { startTestGateway } from '../../../test/startTestGateway.js';
import { eventually, type Message, open, refused } from '../../../test/wsClient.js';
import type { Gateway } from '../../gateway/gateway.js';

const KEY = 'mgmt-secret';
const CLIENT = 'sk-client';
const dir = await mkdtemp(join(tmpdir(), 'ws-gateway-'));
const openai = await startFakeOpenAi();
const anthropic = await startFakeAnthropic();
const gateways: Gateway[] = [];
after(async () => {
  for (const gateway of gateways) await gateway.close();
  await openai.close();
  await anthropic.close();
  await rm(dir, { recursive: true, force: true });
});

let configs = 0;
function configText(extra = '', management = `secret-key: ${KEY}`) {
  const authDir = join(dir, `auths-${++configs}`);
  return `
port: 0
auth:
  selection_strategy: priority
api-keys: [${CLIENT}]
auth-dir: ${authDir}
remote-management:
  ${management}
  trusted-proxies: [127.0.0.1]
providers:
  up:
    kind: openai-responses
    base_url: ${openai.url}
    models: [up-model]
    health_check: { enabled: false }
  claude:
    kind: anthropic
    base_url: ${anthropic.url}
    models: [claude-model]
    health_check: { enabled: false }
server:
  operations:
    retry: { max_attempts: 1 }
  websocket:
    max_message_size: 4K
${extra}
metrics: { port: 0 }
`;
}

/** Starts a gateway whose providers each have one credential, `sk-base-<provider>`, at priority 10. */
async function start(text = configText()) {
  const { gateway } = await startTestGateway(text);
  gateways.push(gateway);
  for (const provider of ['up', 'claude']) {
    await gateway.credentials.manager.add({
      id: `base-${provider}`,
      provider,
      type: 'api_key',
      token: `sk-base-${provider}`,
      priority: 10,
    });
  }
  const ws = (route: string) => `${gateway.url.replace('http', 'ws')}${route}`;
  return { gateway, ws, authDir: gateway.config()['auth-dir'] };
}

const client = { authorization: `Bearer ${CLIENT}` };
const manager = { ...client, 'x-management-key': KEY };
const lastUpstreamRequest = (fake: FakeUpstream) => fake.requests.at(-1)!;
const isEnd = (m: Message) => m.type === 'response.completed' || m.type === 'error';

/** Volatile parts of an event (timestamps, generated ids) replaced, so two runs of one request compare equal. */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalized);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === 'created_at' || k === 'completed_at' ? 0 : typeof v === 'string' && /^(resp|msg|fc|rs|call)_/.test(v) ? k : normalized(v),
      ]),
    );
  }
  return value;
}

describe('websocket upgrades: the auth matrix', async () => {
  const { ws } = await start();

  test('the client key follows api-keys: missing or wrong is 401 before the handshake, right is open', async () => {
    for (const headers of [{}, { authorization: 'Bearer nope' }]) {
      for (const route of ['/v1/ws', '/v1/responses']) {
        const refusal = await refused(ws(route), headers);
        assert.equal(refusal.status, 401);
        assert.equal(JSON.parse(refusal.body).error.code, 'invalid_api_key');
      }
    }
    for (const route of ['/v1/ws', '/v1/responses']) {
      const socket = await open(ws(route), client);
      socket.ws.close();
      assert.equal(await socket.closed, 1005);
    }
  });

  test('other paths asking to upgrade get a clean 404 and a closed socket', async () => {
    for (const route of ['/v1/chat/completions', '/v0/management/config', '/nowhere']) {
      const refusal = await refused(ws(route), manager);
      assert.equal(refusal.status, 404, route);
      assert.equal(JSON.parse(refusal.body).error.code, 'not_found');
    }
  });

  test('an upgrade to anything but websocket is ignored: POST /v1/responses asking for h2c is the HTTP Responses API', async () => {
    const { request } = await import('node:http');
    const url = new URL(ws('/v1/responses').replace('ws', 'http'));
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        headers: {
          ...client,
          'content-type': 'application/json',
          connection: 'Upgrade, HTTP2-Settings',
          upgrade: 'h2c',
          'http2-settings': '',
        },
      });
      req.on('upgrade', () => reject(new Error('switched protocols')));
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'up-model', input: 'hello over HTTP/1.1' }));
    });
    assert.equal(answer.status, 200, answer.body);
    assert.equal(JSON.parse(answer.body).object, 'response');
  });

  test('a wrong management key is 401, the right one opens; the client key is still required', async () => {
    const wrong = await refused(ws('/v1/ws'), { ...client, 'x-management-key': 'nope' });
    assert.equal(wrong.status, 401);
    assert.equal(JSON.parse(wrong.body).error.code, 'invalid_management_key');
    assert.equal((await refused(ws('/v1/ws'), { 'x-management-key': KEY })).status, 401);
    const socket = await open(ws('/v1/ws'), manager);
    socket.ws.close();
  });

  test('a non-local client with allow-remote false is 403 (X-Forwarded-For from a trusted proxy)', async () => {
    const refusal = await refused(ws('/v1/ws'), { ...manager, 'x-forwarded-for': '203.0.113.9' });
    assert.equal(refusal.status, 403);
    assert.equal(JSON.parse(refusal.body).error.code, 'forbidden');
    // Without the management key it is a plain data-plane client, local or not.
    (await open(ws('/v1/ws'), { ...client, 'x-forwarded-for': '203.0.113.9' })).ws.close();
  });
});

describe('websocket upgrades: lockout, disabled management, open gateway', async () => {
  test('after max-failures wrong keys the address is locked out, on the websocket and the management API alike', async () => {
    const { gateway, ws } = await start(configText().replace(`secret-key: ${KEY}`, `secret-key: ${KEY}\n  max-failures: 2`));
    for (let i = 0; i < 2; i++) assert.equal((await refused(ws('/v1/ws'), { ...client, 'x-management-key': 'guess' })).status, 401);
    const locked = await refused(ws('/v1/ws'), manager);
    assert.equal(locked.status, 429);
    assert.ok(Number(locked.headers['retry-after']) > 0);
    const http = await fetch(`${gateway.url}/v0/management/config`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(http.status, 429);
  });

  test('a management key when management is off is refused with 403', async () => {
    const { ws } = await start(configText('', "secret-key: ''"));
    const refusal = await refused(ws('/v1/ws'), manager);
    assert.equal(refusal.status, 403);
    assert.equal(JSON.parse(refusal.body).error.code, 'management_disabled');
  });

  test('with no api-keys the routes are open', async () => {
    const { ws } = await start(configText().replace(`api-keys: [${CLIENT}]`, 'api-keys: []'));
    const socket = await open(ws('/v1/responses'));
    socket.send({ type: 'response.create', model: 'up-model', input: 'open' });
    assert.equal((await socket.next((m) => m.type === 'response.completed')).response.status, 'completed');
    socket.ws.close();
  });
});

describe('websocket credential messages', async () => {
  const { gateway, ws, authDir } = await start();
  // The credential files only: auth-dir also holds the store's lock file and the sign-in records.
  const credentialFiles = async () => (await readdir(authDir)).filter((name) => name.endsWith('.json') && !name.startsWith('.')).sort();

  test('auth.upsert is acknowledged once applied, and the next request is served with the new credential', async () => {
    const socket = await open(ws('/v1/responses'), manager);
    socket.send({
      type: 'auth.upsert',
      request_id: 'up-1',
      credential: { id: 'ws-cred', provider: 'up', type: 'api_key', token: 'sk-upstream-from-ws', priority: 2 },
    });
    const ack = await socket.next();
    assert.deepEqual(ack, { type: 'auth.ack', request_id: 'up-1', id: 'ws-cred', revision: 1 });
    assert.equal(gateway.credentials.manager.describe('ws-cred').priority, 2);
    assert.deepEqual(await credentialFiles(), ['base-claude.json', 'base-up.json', 'ws-cred.json']);
    socket.send({ type: 'response.create', model: 'up-model', input: 'with the new key' });
    await socket.next((m) => m.type === 'response.completed');
    assert.equal(lastUpstreamRequest(openai).headers.authorization, 'Bearer sk-upstream-from-ws');
    // An upsert without an id gets one, and the ack names it; the token is never echoed.
    socket.send({ type: 'auth.upsert', credential: { provider: 'up', type: 'api_key', token: 'sk-second' } });
    const second = await socket.next();
    assert.equal(second.type, 'auth.ack');
    assert.match(second.id, /^up-/);
    assert.equal(second.revision, 1);
    assert.ok(!socket.received.some((m) => JSON.stringify(m).includes('sk-upstream-from-ws') || JSON.stringify(m).includes('sk-second')));
    socket.send({ type: 'auth.delete', id: second.id });
    assert.equal((await socket.next()).type, 'auth.ack');
    socket.ws.close();
  });

  test('auth.delete is acknowledged with the revision removed; the credential is gone from the pool and auth-dir', async () => {
    const socket = await open(ws('/v1/ws'), manager);
    socket.send({ type: 'auth.delete', request_id: 'del-1', id: 'ws-cred' });
    assert.deepEqual(await socket.next(), { type: 'auth.ack', request_id: 'del-1', id: 'ws-cred', revision: 1 });
    assert.deepEqual(await credentialFiles(), ['base-claude.json', 'base-up.json']);
    assert.deepEqual(
      gateway.credentials.manager.list('up').map((c) => c.id),
      ['base-up'],
    );
    socket.send({ type: 'response.create', model: 'up-model', input: 'back to the base key' });
    assert.equal((await socket.next(isEnd)).type, 'error', 'response.create is refused on /v1/ws');
    const responses = await open(ws('/v1/responses'), client);
    responses.send({ type: 'response.create', model: 'up-model', input: 'back to the base key' });
    await responses.next((m) => m.type === 'response.completed');
    assert.equal(lastUpstreamRequest(openai).headers.authorization, 'Bearer sk-base-up');
    responses.ws.close();
    socket.send({ type: 'auth.delete', id: 'ws-cred' });
    assert.deepEqual(await socket.next(), { type: 'auth.ack', id: 'ws-cred', revision: null }, 'deleting what is gone is done');
    socket.ws.close();
  });

  test('without the management key, auth messages are refused and the socket still serves responses', async () => {
    const socket = await open(ws('/v1/responses'), client);
    socket.send({ type: 'auth.upsert', request_id: 'r1', credential: { provider: 'up', type: 'api_key', token: 'sk-nope' } });
    const refusal = await socket.next();
    assert.equal(refusal.type, 'error');
    assert.equal(refusal.request_id, 'r1');
    assert.equal(refusal.error.code, 'management_key_required');
    socket.send({ type: 'auth.delete', id: 'anything' });
    assert.equal((await socket.next()).error.code, 'management_key_required');
    assert.equal(gateway.credentials.manager.list().length, 2, 'only the base credentials');
    socket.send({ type: 'response.create', model: 'up-model', input: 'still served' });
    assert.equal((await socket.next(isEnd)).type, 'response.completed');
    socket.ws.close();
  });

  test('a bad credential is refused naming the fields, never quoting the token', async () => {
    const socket = await open(ws('/v1/ws'), manager);
    socket.send({
      type: 'auth.upsert',
      request_id: 'bad',
      credential: { provider: 'up', type: 'password', token: 'sk-secret-x', extra: 1 },
    });
    const refusal = await socket.next();
    assert.equal(refusal.error.code, 'invalid_message');
    assert.equal(refusal.request_id, 'bad');
    assert.match(refusal.error.message, /credential\.type/);
    assert.match(refusal.error.message, /extra/);
    assert.doesNotMatch(JSON.stringify(refusal), /sk-secret-x/);
    socket.send({ type: 'auth.upsert', credential: { provider: 'up', type: 'api_key', token: '' } });
    assert.match((await socket.next()).error.param, /credential\.token/);
    socket.ws.close();
  });

  test('a client key dropped from api-keys by a reload closes its open sockets with 1008', async () => {
    const config = gateway.config();
    gateway.reload({ ...config, 'api-keys': [CLIENT, 'sk-temporary'] });
    try {
      const temporary = await open(ws('/v1/responses'), { authorization: 'Bearer sk-temporary' });
      const staying = await open(ws('/v1/responses'), client);
      gateway.reload({ ...config, 'api-keys': [CLIENT] });
      assert.equal(await temporary.closed, 1008);
      staying.send({ type: 'response.create', model: 'up-model', input: 'still here' });
      assert.equal((await staying.next(isEnd)).type, 'response.completed');
      staying.ws.close();
    } finally {
      gateway.reload(config);
    }
  });

  test('a key changed by a reload no longer carries management rights on open sockets', async () => {
    const socket = await open(ws('/v1/ws'), manager);
    const config = gateway.config();
    gateway.reload({ ...config, 'remote-management': { ...config['remote-management'], 'secret-key': 'rotated' } });
    try {
      socket.send({ type: 'auth.delete', id: 'x' });
      assert.equal((await socket.next()).error.code, 'management_key_revoked');
    } finally {
      gateway.reload(config);
      socket.ws.close();
    }
  });
});

describe('websocket Responses traffic', async () => {
  const { gateway, ws } = await start();

  async function httpEvents(body: Record<string, unknown>): Promise<unknown[]> {
    const response = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { ...client, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    assert.equal(response.status, 200);
    const events: unknown[] = [];
    for (const block of (await response.text()).split(/\n\n/)) {
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart());
      if (data.length > 0) events.push(JSON.parse(data.join('\n')));
    }
    return events;
  }

  for (const model of ['up-model', 'claude-model']) {
    test(`response.create streams the same events as the HTTP stream (${model})`, async () => {
      const body = { model, input: 'one two three', instructions: 'Be brief.' };
      const expected = await httpEvents(body);
      const socket = await open(ws('/v1/responses'), client);
      socket.send({ type: 'response.create', ...body });
      const got = await socket.until((m) => m.type === 'response.completed');
      assert.equal(got[0]!.type, 'response.created');
      assert.deepEqual(normalized(got), normalized(expected));
      assert.ok(expected.length > 4);
      socket.ws.close();
    });
  }

  test('several requests in flight on one socket, told apart by request_id', async () => {
    const socket = await open(ws('/v1/responses'), client);
    socket.send({ type: 'response.create', request_id: 'a', model: 'up-model', input: 'first' });
    socket.send({ type: 'response.create', request_id: 'b', model: 'claude-model', input: 'second' });
    const done = await Promise.all(['a', 'b'].map((id) => socket.next((m) => m.request_id === id && m.type === 'response.completed')));
    assert.equal(done[0]!.response.output[0].content[0].text, 'Echo: first');
    assert.equal(done[1]!.response.output[0].content[0].text, 'Echo: second');
    assert.ok(socket.received.every((m) => m.request_id === 'a' || m.request_id === 'b'));
    socket.ws.close();
  });

  test('an upstream failure ends the request with an error message in the Responses error shape', async () => {
    openai.setBehaviour(() => ({
      type: 'status',
      status: 400,
      body: { error: { message: 'bad thing', type: 'invalid_request_error', code: 'bad' } },
    }));
    try {
      const socket = await open(ws('/v1/responses'), client);
      socket.send({ type: 'response.create', request_id: 'x', model: 'up-model', input: 'fail' });
      const error = await socket.next(isEnd);
      assert.equal(error.type, 'error');
      assert.equal(error.request_id, 'x');
      assert.equal(error.status, 400);
      assert.equal(typeof error.error.message, 'string');
      assert.equal(typeof error.error.type, 'string');
      socket.send({ type: 'response.create', model: 'no-such-model', input: 'x' });
      const unknown = await socket.next(isEnd);
      assert.deepEqual([unknown.status, unknown.error.code, unknown.error.param], [404, 'model_not_found', 'model']);
      socket.ws.close();
    } finally {
      openai.setBehaviour(undefined);
    }
  });

  test('bad JSON, a non-object, an unknown type and a bad body get error messages; the socket stays open', async () => {
    const socket = await open(ws('/v1/responses'), client);
    socket.send('{not json');
    assert.equal((await socket.next()).error.code, 'invalid_json');
    socket.send('[1,2]');
    assert.equal((await socket.next()).error.code, 'invalid_message');
    socket.send({ type: 'session.update', request_id: 'q' });
    const unknown = await socket.next();
    assert.deepEqual([unknown.error.code, unknown.request_id], ['unknown_type', 'q']);
    socket.send({ type: 'response.create', input: 'no model' });
    const noModel = await socket.next();
    assert.deepEqual([noModel.status, noModel.error.param], [400, 'model']);
    socket.send({ type: 'response.create', model: 'up-model', input: 'x', stream: false });
    assert.equal((await socket.next()).error.param, 'stream');
    socket.ws.send(Buffer.from('binary'), { binary: true });
    assert.equal((await socket.next()).error.code, 'invalid_message');
    socket.send({ type: 'response.create', model: 'up-model', input: 'after all that' });
    assert.equal((await socket.next(isEnd)).type, 'response.completed');
    socket.ws.close();
  });

  test('a generate: false warm-up is answered without an upstream call; previous_response_id of this socket expands to the whole conversation', async () => {
    // As Codex does over the websocket: a warm-up, then each turn sends only its new items, chained on the last response.
    const socket = await open(ws('/v1/responses'), client);
    const before = anthropic.requests.length;
    socket.send({ type: 'response.create', model: 'claude-model', instructions: 'Be brief.', input: 'setup', generate: false });
    const warm = await socket.next(isEnd);
    assert.deepEqual([warm.type, warm.response.status, warm.response.output], ['response.completed', 'completed', []]);
    assert.equal(anthropic.requests.length, before, 'a warm-up asks nothing of the model');
    socket.send({ type: 'response.create', model: 'claude-model', previous_response_id: warm.response.id, input: 'first turn' });
    const first = await socket.next(isEnd);
    assert.equal(first.type, 'response.completed', JSON.stringify(first));
    socket.send({ type: 'response.create', model: 'claude-model', previous_response_id: first.response.id, input: 'second turn' });
    const second = await socket.next(isEnd);
    assert.equal(second.type, 'response.completed', JSON.stringify(second));
    const sent = JSON.stringify(anthropic.requests.at(-1)?.body?.messages);
    for (const said of ['setup', 'first turn', first.response.output[0].content[0].text, 'second turn'])
      assert.ok(sent.includes(said), `${said} in ${sent}`);
    assert.equal(anthropic.requests.length, before + 2);
    // A response this socket does not know is still state kept by OpenAI: refused for another family, as over HTTP.
    socket.send({ type: 'response.create', model: 'claude-model', previous_response_id: 'resp_elsewhere', input: 'x' });
    const unknown = await socket.next(isEnd);
    assert.deepEqual([unknown.status, unknown.error.code, unknown.error.param], [400, 'unsupported_translation', 'previous_response_id']);
    socket.ws.close();
  });

  test('response.create on /v1/ws is refused: Responses traffic lives on /v1/responses', async () => {
    const socket = await open(ws('/v1/ws'), client);
    socket.send({ type: 'response.create', model: 'up-model', input: 'x' });
    assert.equal((await socket.next()).error.code, 'unsupported_type');
    socket.ws.close();
  });

  test('a message over server.websocket.max_message_size closes the socket with 1009', async () => {
    const socket = await open(ws('/v1/responses'), client);
    socket.send({ type: 'response.create', model: 'up-model', input: 'x'.repeat(5000) });
    assert.equal(await socket.closed, 1009);
  });

  test('POST /v1/responses is still the HTTP Responses API', async () => {
    const sdk = new OpenAI({ apiKey: CLIENT, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const response = await sdk.responses.create({ model: 'up-model', input: 'over http' });
    assert.equal(response.output_text, 'Echo: over http');
    const plain = await fetch(`${gateway.url}/v1/responses`, { headers: client });
    assert.equal(plain.status, 405, 'a GET without an upgrade is not the websocket');
  });

  test('connections and messages are counted in svc_websocket_* metrics', async () => {
    const text = await gateway.observability.registry!.metrics();
    assert.match(text, /svc_websocket_connections_total\{route="\/v1\/responses",outcome="accepted"\} [1-9]/);
    assert.match(text, /svc_websocket_messages_total\{route="\/v1\/responses",direction="in",type="response.create"\} [1-9]/);
    assert.match(text, /svc_websocket_messages_total\{route="\/v1\/responses",direction="out",type="event"\} [1-9]/);
    assert.match(text, /svc_websocket_messages_total\{route="\/v1\/responses",direction="in",type="invalid"\} [1-9]/);
  });
});

describe('websocket fuzzing', async () => {
  const { gateway, ws } = await start();
  const anyType = fc.constantFrom('response.create', 'auth.upsert', 'auth.delete', 'session.update', '', 42);
  const message = fc.oneof(
    fc.string(),
    fc.json(),
    fc.record({ type: anyType, id: fc.string() }, { requiredKeys: ['type'] }),
    fc.record(
      {
        type: fc.constantFrom('auth.upsert'),
        request_id: fc.string(),
        credential: fc.record({
          provider: fc.string(),
          type: fc.constantFrom('api_key', 'oauth', 'x'),
          token: fc.string(),
          priority: fc.integer(),
        }),
      },
      { requiredKeys: ['type'] },
    ),
  );

  test('1,000 random messages: one answer each, never a crash, the socket stays open and the gateway still serves', async () => {
    const messages = fc.sample(message, 1000).map((m) => (typeof m === 'string' ? m : JSON.stringify(m)));
    // Without the management key nothing can change, and response.create is not served on /v1/ws: every message gets one error.
    const socket = await open(ws('/v1/ws'), client);
    for (const text of messages) socket.send(text);
    await eventually(() => socket.received.length === messages.length, 10_000, 'an answer per message');
    assert.ok(socket.received.every((m) => m.type === 'error' && typeof m.error.code === 'string'));
    socket.ws.close();
    // With it, credential messages are applied or refused, one answer each.
    const managed = await open(ws('/v1/ws'), manager);
    const auth = fc.sample(message, 300).map((m) => (typeof m === 'string' ? m : JSON.stringify(m)));
    for (const text of auth) managed.send(text);
    await eventually(() => managed.received.length === auth.length, 10_000, 'an answer per credential message');
    assert.ok(managed.received.every((m) => m.type === 'error' || m.type === 'auth.ack'));
    managed.ws.close();
    const health = await fetch(`${gateway.url}/health`);
    assert.equal(health.status, 200);
  });
});

describe('websocket lifecycle', async () => {
  /**
   * An upstream that starts a stream, its answer begun (the gateway holds a bare `response.created` back until
   * then, so that an error right after it could still be retried), and then waits, reporting when the gateway
   * hangs up on it.
   */
  async function stallingUpstream() {
    const hangups: string[] = [];
    const started: string[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: { id: 'resp_s', object: 'response', status: 'in_progress', output: [] } })}\n\n` +
            `event: response.output_item.added\ndata: ${JSON.stringify({ type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { id: 'msg_s', type: 'message', status: 'in_progress', role: 'assistant', content: [] } })}\n\n`,
        );
        started.push(req.url ?? '');
        res.on('close', () => hangups.push(req.url ?? ''));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    return {
      url,
      started,
      hangups,
      close: () => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  /** Runs `body` against a gateway whose `up` provider is a stalling upstream. */
  async function withStallingUpstream(
    body: (stalling: Awaited<ReturnType<typeof stallingUpstream>>, started: Awaited<ReturnType<typeof start>>) => Promise<void>,
  ) {
    const stalling = await stallingUpstream();
    try {
      await body(stalling, await start(configText().replace(`base_url: ${openai.url}`, `base_url: ${stalling.url}`)));
    } finally {
      await stalling.close();
    }
  }

  test('closing the socket aborts the upstream requests in flight', () =>
    withStallingUpstream(async (stalling, { gateway, ws }) => {
      const socket = await open(ws('/v1/responses'), client);
      socket.send({ type: 'response.create', request_id: 'one', model: 'up-model', input: 'a' });
      socket.send({ type: 'response.create', request_id: 'two', model: 'up-model', input: 'b' });
      await socket.next((m) => m.request_id === 'one' && m.type === 'response.created');
      await socket.next((m) => m.request_id === 'two' && m.type === 'response.created');
      assert.equal(stalling.hangups.length, 0);
      socket.ws.close();
      await eventually(() => stalling.hangups.length === 2, 5000, 'both upstream requests aborted');
      await eventually(() => gateway.websocket.connections === 0, 5000, 'the connection forgotten');
    }));

  test('gateway.close() closes open sockets with 1001 and ends their requests', () =>
    withStallingUpstream(async (stalling, { gateway, ws }) => {
      const idle = await open(ws('/v1/ws'), manager);
      const busy = await open(ws('/v1/responses'), client);
      busy.send({ type: 'response.create', model: 'up-model', input: 'a' });
      await busy.next((m) => m.type === 'response.created');
      await gateway.close();
      gateways.splice(gateways.indexOf(gateway), 1);
      assert.equal(await idle.closed, 1001);
      assert.equal(await busy.closed, 1001);
      await eventually(() => stalling.hangups.length === 1, 5000, 'the upstream request aborted');
    }));
});
