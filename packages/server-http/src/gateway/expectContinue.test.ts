import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, describe, test } from 'node:test';
import { parseConfig } from './config/load.js';
import { CONTROL_PLANE_BODY_LIMIT } from './controlPlane.js';
import { Gateway } from './gateway.js';

const KEY = 'continue-secret';
const gateway = await Gateway.start({
  config: parseConfig(`
port: 0
api-keys: [sk-client]
remote-management: { secret-key: ${KEY} }
providers:
  alpha: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
`),
  logDestination: { write() {} },
});
after(() => gateway.close());

interface Outcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Whether the gateway sent `100 Continue`. */
  continued: boolean;
}

/**
 * A raw request announcing `Expect: 100-continue` and `contentLength` bytes. `body`, when given, is
 * sent only once the gateway answers 100; without it nothing is ever uploaded.
 */
function expectContinue(path: string, headers: Record<string, string>, contentLength: number, body?: string): Promise<Outcome> {
  const { port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = request({
      host: '127.0.0.1',
      port,
      path,
      method: path.startsWith('/v1/') ? 'POST' : 'PUT',
      headers: { ...headers, expect: '100-continue', 'content-length': String(contentLength) },
    });
    req.on('continue', () => {
      continued = true;
      if (body !== undefined) req.end(body);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), continued });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe('Expect: 100-continue', () => {
  test('a data-plane body over its cap gets 413 in the OpenAI shape and never a 100', async () => {
    const oversized = gateway.dataPlane.maxBodyBytes + 1;
    const outcome = await expectContinue(
      '/v1/chat/completions',
      { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
      oversized,
    );
    assert.equal(outcome.continued, false, 'no 100 Continue');
    assert.equal(outcome.status, 413);
    const { error } = JSON.parse(outcome.body);
    assert.equal(error.code, 'payload_too_large');
    assert.equal(error.type, 'invalid_request_error', 'the OpenAI error shape');
    // The upload never came, so the connection cannot carry another request.
    assert.equal(outcome.headers.connection, 'close');
  });

  test('a control-plane body over its cap gets 413 in the control plane shape and never a 100', async () => {
    const outcome = await expectContinue(
      '/v0/management/config.yaml',
      { authorization: `Bearer ${KEY}`, 'content-type': 'application/yaml' },
      CONTROL_PLANE_BODY_LIMIT + 1,
    );
    assert.equal(outcome.continued, false, 'no 100 Continue');
    assert.equal(outcome.status, 413);
    assert.deepEqual(Object.keys(JSON.parse(outcome.body).error).sort(), ['code', 'message']);
    assert.equal(JSON.parse(outcome.body).error.code, 'payload_too_large');
    assert.equal(outcome.headers.connection, 'close');
  });

  test('a body within the cap gets its 100, is uploaded and answered as usual', async () => {
    const body = JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: 'continue please' }] });
    const outcome = await expectContinue(
      '/v1/chat/completions',
      { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
      Buffer.byteLength(body),
      body,
    );
    assert.equal(outcome.continued, true);
    assert.equal(outcome.status, 200, outcome.body);
    assert.match(JSON.parse(outcome.body).choices[0].message.content, /You said: continue please/);
  });

  test('a control-plane body within the cap gets its 100 too', async () => {
    const body = JSON.stringify({ value: false });
    const outcome = await expectContinue(
      '/v0/management/quota-exceeded/switch-project',
      { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      Buffer.byteLength(body),
      body,
    );
    assert.equal(outcome.continued, true);
    assert.equal(outcome.status, 200, outcome.body);
    assert.deepEqual(JSON.parse(outcome.body), { 'switch-project': false });
  });
});
