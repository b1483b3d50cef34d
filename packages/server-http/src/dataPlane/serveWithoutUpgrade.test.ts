import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { type IncomingMessage, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { startTestGateway } from '../../test/startTestGateway.js';
import { headWithoutUpgrade } from './serveWithoutUpgrade.js';

// What `curl --http2 http://…` sends on its first request.
const H2C = { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAAQCAAAAAAIAAAAA' };
const CLIENT = 'sk-client';

const dir = await mkdtemp(join(tmpdir(), 'h2c-'));
const { gateway } = await startTestGateway(`
port: 0
api-keys: [${CLIENT}]
auth-dir: ${join(dir, 'auths')}
providers:
  demo:
    kind: mock
    models: [demo-model]
    options: { latency_ms: 150 }
metrics: { enabled: false }
`);
after(async () => {
  await gateway.close();
  await rm(dir, { recursive: true, force: true });
});
const { port } = new URL(gateway.url);

interface Answer {
  status: number;
  httpVersion: string;
  body: string;
  /** Whether the gateway left the connection open for the next request. */
  keepAlive: boolean;
}

/** One request through node:http's client, whose `upgrade` event would fire had the gateway switched protocols. */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { authorization: `Bearer ${CLIENT}`, ...headers } });
    req.on('upgrade', () => reject(new Error('the gateway switched protocols')));
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          httpVersion: res.httpVersion,
          body: text,
          keepAlive: res.headers.connection === 'keep-alive',
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

const chat = (content: string) => JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content }] });

describe('an upgrade to h2c is ignored: the request is answered over HTTP/1.1', () => {
  test('GET /v1/models', async () => {
    const answer = await send('GET', '/v1/models', H2C);
    assert.equal(answer.status, 200, answer.body);
    assert.equal(answer.httpVersion, '1.1');
    assert.deepEqual(
      JSON.parse(answer.body).data.map((model: { id: string }) => model.id),
      ['demo-model'],
    );
    assert.equal(answer.keepAlive, true);
  });

  test('POST /v1/chat/completions with a body, by Content-Length and chunked', async () => {
    const sized = await send('POST', '/v1/chat/completions', { ...H2C, 'content-type': 'application/json' }, chat('sized body'));
    assert.equal(sized.status, 200, sized.body);
    assert.match(JSON.parse(sized.body).choices[0].message.content, /You said: sized body/);
    const chunked = await send(
      'POST',
      '/v1/chat/completions',
      { ...H2C, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      chat('chunked body'),
    );
    assert.equal(chunked.status, 200, chunked.body);
    assert.match(JSON.parse(chunked.body).choices[0].message.content, /You said: chunked body/);
  });

  test('the client key is still checked', async () => {
    const answer = await send('GET', '/v1/models', { ...H2C, authorization: 'Bearer wrong' });
    assert.equal(answer.status, 401);
    assert.equal(JSON.parse(answer.body).error.code, 'invalid_api_key');
  });

  test('pipelined behind a slower request, the answers come back in the order asked', async () => {
    const socket = connect(Number(port), '127.0.0.1');
    // Out of order, the gateway's answers have been seen to stall; fail in seconds, not at the keep-alive timeout.
    socket.setTimeout(5000, () => socket.destroy());
    const body = chat('first');
    socket.write(
      [
        `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${CLIENT}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${CLIENT}\r\nConnection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n`,
      ].join(''),
    );
    let raw = '';
    socket.setEncoding('utf8');
    for await (const chunk of socket) raw += chunk;
    // A body sent with its content-length ends without a line break: the next status line follows it directly.
    const statuses = [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);
    assert.deepEqual(statuses, ['200', '200'], raw);
    const completion = raw.indexOf('You said: first');
    const models = raw.indexOf('"object":"list"');
    assert.ok(completion > 0 && models > completion, `the completion (slow) comes first:\n${raw}`);
  });
});

describe('headWithoutUpgrade', () => {
  const head = (rawHeaders: string[]) =>
    headWithoutUpgrade({ method: 'POST', url: '/v1/x?a=1', httpVersion: '1.1', rawHeaders } as IncomingMessage).toString('latin1');

  test('drops Upgrade, HTTP2-Settings and their Connection options, and keeps the rest as sent', () => {
    assert.equal(
      head([
        'Host',
        'h',
        'CONNECTION',
        'Upgrade, keep-alive ,HTTP2-Settings',
        'UPGRADE',
        'h2c',
        'Http2-Settings',
        'AA',
        'X-Dup',
        'a',
        'X-Dup',
        'b',
      ]),
      'POST /v1/x?a=1 HTTP/1.1\r\nHost: h\r\nCONNECTION: keep-alive\r\nX-Dup: a\r\nX-Dup: b\r\n\r\n',
    );
  });

  test('a Connection header left with no options goes too; header bytes past ASCII survive', () => {
    assert.equal(
      head(['Connection', 'upgrade', 'Upgrade', 'h2c', 'X-Name', 'caf\u00e9']),
      'POST /v1/x?a=1 HTTP/1.1\r\nX-Name: caf\u00e9\r\n\r\n',
    );
  });
});
