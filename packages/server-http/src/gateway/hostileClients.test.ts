/**
 * Clients that send their bodies wrong: one over the cap sent chunked (no
 * length to refuse it by) hears the 413 instead of a reset connection, and
 * one that leaves halfway through its body is no error of the gateway's
 * (before, each wrote an error line with a stack: a log any client could
 * flood).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';

const lines: string[] = [];
const { gateway } = await startTestGateway(
  `
port: 0
api-keys: [sk-client]
providers:
  demo: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
`,
  {
    logDestination: {
      write(line: string) {
        lines.push(line);
      },
    },
  },
);
const url = new URL(gateway.url);
const serverSockets = new Set<Socket>();
gateway.server.on('connection', (socket: Socket) => {
  serverSockets.add(socket);
  socket.on('close', () => serverSockets.delete(socket));
});

/** A POST to the chat route on a fresh connection; `write` sends the body its own way. */
function post(headers: Record<string, string>, write: (req: ReturnType<typeof request>) => void) {
  return new Promise<{ status: number; body: string } | { error: string }>((resolve) => {
    const req = request({
      host: url.hostname,
      port: url.port,
      path: '/v1/chat/completions',
      method: 'POST',
      agent: false,
      headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json', ...headers },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    write(req);
  });
}

test('a chunked body over the 10 MiB cap is answered 413 payload_too_large, not with a reset', async () => {
  const piece = Buffer.alloc(64 * 1024, 'a');
  const total = 12 * 1024 * 1024;
  const answer = await post({ 'transfer-encoding': 'chunked' }, (req) => {
    let sent = 0;
    const pump = () => {
      while (sent < total) {
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
  assert.ok('status' in answer, `the client saw ${JSON.stringify(answer)}`);
  assert.equal(answer.status, 413);
  const { error } = JSON.parse(answer.body) as { error: { code: string; message: string } };
  assert.equal(error.code, 'payload_too_large');
  assert.match(error.message, /10485760-byte limit/);
});

test('a client that leaves halfway through its body writes no error to the log', async () => {
  const before = lines.length;
  // The 100 Continue says the gateway has started reading the body; the client sends part of it and leaves.
  const left = post({ 'content-length': '1000', expect: '100-continue' }, (req) => {
    req.once('continue', () => req.write('{"model":"demo-model","messages":', () => req.destroy()));
  });
  assert.deepEqual(await left, { error: 'ECONNRESET' });
  await eventually('the gateway to see the connection close', () => serverSockets.size === 0);
  // The body's reader gives up on that close; let what it settles run before reading the log.
  await new Promise((resolve) => setImmediate(resolve));
  const errors = lines.slice(before).filter((line) => JSON.parse(line).level === 'error');
  assert.deepEqual(errors, []);
});
