// Attacks on the agent session server, each performed over a real socket and refused: a public bind without a
// key (refused before the agent starts), a web page by DNS rebinding or from another origin, an HTML form, and a
// reverse proxy on the same host making its clients local. Typing into the agent is the prize in each.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { UnsafeBindError } from '@switchyard/http-kit';
import { type AgentSessionServer, startAgentSessionServer } from './agentSessionServer.js';

/** A raw request, so the test sets Host, Origin and forwarding headers as an attacker would. */
function send(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; code?: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => {
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
          } catch {
            code = undefined;
          }
          resolve({ status: res.statusCode ?? 0, ...(code ? { code } : {}) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

// `cat` echoes what is typed: a message that got through would show up in the conversation.
const AGENT = { command: 'cat', port: 0, stableWindowMs: 200 };

test('a public bind without a key is refused before the agent starts; --insecure serves it; loopback warns', async () => {
  await assert.rejects(
    startAgentSessionServer({ ...AGENT, host: '0.0.0.0' }),
    (error: unknown) => error instanceof UnsafeBindError && /--api-key-env/.test(error.message) && /--insecure/.test(error.message),
  );
  const openWarnings: string[] = [];
  const open = await startAgentSessionServer({ ...AGENT, host: '0.0.0.0', insecure: true, onWarning: (m) => openWarnings.push(m) });
  await open.close();
  assert.deepEqual(openWarnings.length, 1, 'an open public bind is warned of');
  assert.match(openWarnings[0]!, /listens on 0\.0\.0\.0 with no client key \(--insecure\): anyone who can reach it/);
  const keyed = await startAgentSessionServer({ ...AGENT, host: '0.0.0.0', apiKey: 'sk-agent-key-for-tests' });
  await keyed.close();
  const warnings: string[] = [];
  const local = await startAgentSessionServer({ ...AGENT, onWarning: (message) => warnings.push(message) });
  await local.close();
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /no client key/);
});

test('--insecure on a public bind serves callers on other machines, by any name; a key-less server without it refuses them', async () => {
  // A peer no test can be: the request reaches the API as node:http would hand it over from another machine.
  const fromElsewhere = (host: string) => ({ incoming: { socket: { remoteAddress: '203.0.113.9' }, headers: { host } } });
  const open = await startAgentSessionServer({ ...AGENT, host: '0.0.0.0', insecure: true, onWarning: () => undefined });
  try {
    const served = await open.api.app.request('/status', { headers: { host: '198.51.100.4:3284' } }, fromElsewhere('198.51.100.4:3284'));
    assert.equal(served.status, 200, await served.text());
  } finally {
    await open.close();
  }
  const local = await startAgentSessionServer({ ...AGENT, onWarning: () => undefined });
  try {
    const refused = await local.api.app.request('/status', { headers: { host: '127.0.0.1:3284' } }, fromElsewhere('127.0.0.1:3284'));
    assert.equal(refused.status, 403);
  } finally {
    await local.close();
  }
});

describe('a key-less server on loopback', () => {
  let server: AgentSessionServer;
  const warnings: string[] = [];
  before(async () => {
    server = await startAgentSessionServer({ ...AGENT, onWarning: (message) => warnings.push(message) });
  });
  after(() => server.close());
  const host = () => new URL(server.url).host;
  const message = JSON.stringify({ content: 'rm -rf ~', type: 'raw' });

  test('DNS rebinding: a foreign Host cannot read or type', async () => {
    assert.deepEqual(await send(server.url, 'GET', '/messages', { host: 'rebind.evil.example' }), { status: 403, code: 'forbidden' });
    const typed = await send(
      server.url,
      'POST',
      '/message',
      { host: `rebind.evil.example:${new URL(server.url).port}`, 'content-type': 'application/json' },
      message,
    );
    assert.equal(typed.status, 403);
  });

  test('a page from another origin cannot type, with JSON or with a form', async () => {
    const json = await send(
      server.url,
      'POST',
      '/message',
      { host: host(), origin: 'http://evil.example', 'content-type': 'application/json' },
      message,
    );
    assert.equal(json.status, 403);
    const form = await send(server.url, 'POST', '/message', { host: host(), 'content-type': 'text/plain' }, message);
    assert.deepEqual(form, { status: 415, code: 'unsupported_media_type' });
    const urlencoded = await send(
      server.url,
      'POST',
      '/message',
      { host: host(), 'content-type': 'application/x-www-form-urlencoded' },
      'content=x',
    );
    assert.equal(urlencoded.status, 415);
  });

  test('a reverse proxy on this host does not make its clients local', async () => {
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
      const answer = await send(
        server.url,
        'POST',
        '/message',
        { host: host(), 'content-type': 'application/json', [header]: '203.0.113.9' },
        message,
      );
      assert.deepEqual(answer, { status: 403, code: 'forbidden' }, header);
    }
    const forwarded = warnings.filter((w) => /forwarded by .* counts as remote/.test(w));
    assert.equal(forwarded.length, 1, `one warning a minute, whatever the flood: ${JSON.stringify(warnings)}`);
  });

  test('nothing the attacks sent reached the agent, and a local client still can', async () => {
    const before = (await (await fetch(`${server.url}/messages`)).json()) as { messages: unknown[] };
    assert.deepEqual(before.messages, []);
    const ok = await send(
      server.url,
      'POST',
      '/message',
      { host: host(), 'content-type': 'application/json' },
      JSON.stringify({ content: 'hello', type: 'raw' }),
    );
    assert.equal(ok.status, 200);
  });
});
