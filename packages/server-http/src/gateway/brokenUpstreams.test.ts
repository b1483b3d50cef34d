/**
 * Upstreams that answer 200 with something that is not an answer: a
 * proxy's HTML page where JSON belongs, and a stream whose one event never
 * ends. The first is a failed attempt (tried elsewhere, or a 502), never a
 * 200 passed on; the second is cut off at the event limit, not buffered
 * until the gateway runs out of memory.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { eventually, startFakeOpenAi } from '@switchyard/test-support';
import { MAX_SSE_EVENT_BYTES } from '@switchyard/translate';
import { startTestGateway } from '../../test/startTestGateway.js';
import type { Gateway } from './gateway.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A loopback upstream answering every POST with `answer` (GETs, the health probes, get an empty model list). */
async function rawUpstream(answer: (res: ServerResponse, req: IncomingMessage) => void): Promise<{ url: string; posts: () => number }> {
  let posts = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
      posts++;
      answer(res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, posts: () => posts };
}

/** A gateway over `providersYaml`; each provider of kind `anthropic` gets an API key (the kind needs one). */
async function startGateway(providersYaml: string, maxAttempts = 3): Promise<Gateway> {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-broken-upstreams-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const { gateway } = await startTestGateway(`
port: 0
api-keys: [sk-client]
auth-dir: ${join(dir, 'auths')}
server:
  operations:
    retry: { max_attempts: ${maxAttempts} }
    load_balancing: { strategy: priority }
    health_check: { interval: 10m }
    cache: { enabled: false }
providers:
${providersYaml}
metrics: { enabled: false }
`);
  cleanups.push(() => gateway.close());
  for (const [, name] of providersYaml.matchAll(/^ {2}([\w-]+):\n {4}kind: anthropic$/gm))
    await gateway.credentials.manager.add({ id: `${name}-key`, provider: name!, type: 'api_key', token: 'sk-upstream' });
  return gateway;
}

const post = (gateway: Gateway, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const PORTAL_PAGE = '<!doctype html><html><body><h1>Please sign in to the network</h1></body></html>';

test('a 200 whose body is an HTML page is a failed attempt: the next provider answers, or the client gets a 502, never the page', async () => {
  const portal = await rawUpstream((res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PORTAL_PAGE));
  const real = await startFakeOpenAi({ models: ['gpt-4o'] });
  cleanups.push(() => real.close());
  const gateway = await startGateway(`
  portal:
    kind: openai-compatible
    base_url: ${portal.url}
    models: [gpt-4o]
    priority: 0
  real:
    kind: openai-compatible
    base_url: ${real.url}
    models: [gpt-4o]
    priority: 1
  portal-anthropic:
    kind: anthropic
    base_url: ${portal.url}
    models: [claude-sonnet-4-5]
`);
  const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
  const answered = await post(gateway, '/v1/chat/completions', chat);
  const text = await answered.text();
  assert.equal(answered.status, 200, text);
  assert.equal(answered.headers.get('x-switchyard-provider'), 'real', 'the provider after the portal answered');
  assert.match(answered.headers.get('content-type') ?? '', /application\/json/);
  assert.equal(JSON.parse(text).choices[0].message.content, 'Echo: hi');
  assert.equal(portal.posts(), 1, 'the portal was asked first');

  // A token count passed through as it came (Anthropic to Anthropic) is checked the same way.
  const counted = await post(
    gateway,
    '/v1/messages/count_tokens',
    { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] },
    { 'anthropic-version': '2023-06-01' },
  );
  const countText = await counted.text();
  assert.equal(counted.status, 502, countText);
  assert.equal(JSON.parse(countText).type, 'error', "the failure is in Anthropic's shape");
  assert.ok(!countText.includes('<html>'), 'the page never reaches the client');
});

test('a stream whose event never ends is cut off at the event limit: the client gets a 502 and the upstream call is cancelled', async () => {
  // Far more than the limit; the upstream would stop there, without ending its event, if nobody cut it off.
  const sendAtMost = MAX_SSE_EVENT_BYTES + 16 * 1024 * 1024;
  const runs: { written: number; closed: boolean; finished: boolean }[] = [];
  const endless = await rawUpstream((res) => {
    const run = { written: 0, closed: false, finished: false };
    runs.push(run);
    res.on('close', () => {
      run.closed = true;
      run.finished = res.writableFinished;
    });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const piece = Buffer.alloc(64 * 1024, 'a');
    res.write('data: {"choices":[{"delta":{"content":"');
    const pump = () => {
      while (!res.destroyed && run.written < sendAtMost) {
        run.written += piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
  const gateway = await startGateway(
    `
  endless-openai:
    kind: openai-compatible
    base_url: ${endless.url}
    models: [passed-through]
  endless-anthropic:
    kind: anthropic
    base_url: ${endless.url}
    models: [translated]
`,
    1,
  );
  // Same family (bytes passed through event by event) and translated (Anthropic's stream parsed for an OpenAI client).
  for (const model of ['passed-through', 'translated']) {
    const before = runs.length;
    const response = await post(gateway, '/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const body = await response.text();
    assert.equal(response.status, 502, `${model}: ${body.slice(0, 300)}`);
    assert.match(JSON.parse(body).error.message, /SSE_EVENT_TOO_LARGE/);
    const attempts = runs.slice(before);
    assert.equal(attempts.length, 1);
    await eventually(`${model}: the upstream call to close`, () => attempts.every((run) => run.closed));
    for (const run of attempts) {
      assert.ok(!run.finished, `${model}: the gateway cancelled the upstream call`);
      assert.ok(run.written < sendAtMost, `${model}: it stopped reading at the limit (${run.written} bytes sent)`);
    }
  }
});
