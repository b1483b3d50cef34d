import assert from 'node:assert/strict';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { getRequestListener } from '@hono/node-server';
import { sendExpectingContinue } from '@switchyard/test-support';
import { Hono } from 'hono';
import { continueWhenBodyIsRead } from './expectContinue.js';

const servers: Server[] = [];
after(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));

/** A server whose handler answers 401 to `/refuse` without reading, and echoes the body's length elsewhere. */
async function serve(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  continueWhenBodyIsRead(server);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const nodeUrl = await serve((req, res) => {
  if (req.url === '/refuse') {
    res.writeHead(401).end('no');
    return;
  }
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
  });
  req.on('end', () => res.end(`read ${size}`));
});

const app = new Hono();
app.put('/refuse', (c) => c.text('no', 401));
app.put('/read', async (c) => c.text(`read ${(await c.req.text()).length}`));
const honoUrl = await serve(getRequestListener(app.fetch));

describe('Expect: 100-continue is answered by whether the handler reads the body', () => {
  for (const [name, url] of [
    ['node:http', nodeUrl],
    ['Hono', honoUrl],
  ] as const) {
    test(`${name}: an answer given without reading comes without a 100, and closes the connection`, async () => {
      const outcome = await sendExpectingContinue(`${url}/refuse`, { method: 'PUT', contentLength: 5 });
      assert.deepEqual([outcome.status, outcome.continued], [401, false]);
      assert.equal(outcome.headers.connection, 'close', 'the client may still send the body');
    });

    test(`${name}: a handler that reads gets the body after a 100`, async () => {
      const outcome = await sendExpectingContinue(`${url}/read`, { method: 'PUT', contentLength: 5, body: 'hello' });
      assert.deepEqual([outcome.status, outcome.body, outcome.continued], [200, 'read 5', true]);
    });

    test(`${name}: a chunked body too`, async () => {
      const outcome = await sendExpectingContinue(`${url}/read`, { method: 'PUT', body: 'hello, chunked' });
      assert.deepEqual([outcome.status, outcome.body, outcome.continued], [200, 'read 14', true]);
    });
  }
});
