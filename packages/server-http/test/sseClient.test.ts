// The test helper's own test: SSE frames are parsed as bytes arrive, whatever the chunking.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { openEvents } from '@switchyard/test-support';

test('a character whose UTF-8 bytes straddle two chunks is decoded whole', async () => {
  let response: ServerResponse | undefined;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    response = res;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  after(() => {
    response?.destroy();
    server.close();
  });
  const events = await openEvents(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  after(() => events.close());
  // '😀' is F0 9F 98 80 in UTF-8: the first chunk ends after its first two bytes.
  const text = Buffer.from('data: {"text":"a😀b"}\n\n');
  const cut = text.indexOf(0xf0) + 2;
  response!.write(Buffer.concat([Buffer.from('data: {"n":1}\n\n'), text.subarray(0, cut)]));
  // The rest goes out only once the client has parsed the first event, so it cannot share its chunk.
  await events.waitFor((e) => e.data.n === 1, 'the first event', 5000);
  response!.write(text.subarray(cut));
  const second = await events.waitFor((e) => 'text' in e.data, 'the split event', 5000);
  assert.equal(second.data.text, 'a😀b');
});
