import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gateway, parseConfig } from '@switchyard/server-http';
import WebSocket from 'ws';

// One demo provider (`mock` answers in process); the management key lets this socket send credential messages.
const authDir = await mkdtemp(join(tmpdir(), 'switchyard-ws-'));
const config = parseConfig(`
port: 0
api-keys: [sk-local]
auth-dir: ${authDir}
remote-management: { secret-key: mgmt-local }
providers:
  demo: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
`);
const gateway = await Gateway.start({ config, logDestination: { write() {} } });
const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/v1/responses`, {
  headers: { authorization: 'Bearer sk-local', 'x-management-key': 'mgmt-local' },
});
await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));

// Every message is one JSON object; wait for the next one of some types.
type Message = { type: string; id?: string; revision?: number | null; request_id?: string; delta?: string };
const next = (...types: string[]) =>
  new Promise<Message>((resolve) => {
    const listener = (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString()) as Message;
      if (!types.includes(message.type)) return;
      socket.off('message', listener);
      resolve(message);
    };
    socket.on('message', listener);
  });

socket.send(JSON.stringify({ type: 'auth.upsert', credential: { id: 'demo-key', provider: 'demo', type: 'api_key', token: 'sk-demo' } }));
const ack = await next('auth.ack', 'error');
console.log(`${ack.type}: ${ack.id} at revision ${ack.revision}`);

let text = '';
socket.on('message', (data) => {
  const event = JSON.parse(data.toString()) as Message;
  if (event.type === 'response.output_text.delta') text += event.delta;
});
socket.send(JSON.stringify({ type: 'response.create', request_id: 'hello-1', model: 'demo-model', input: 'hello over a websocket' }));
const end = await next('response.completed', 'error');
console.log(`${end.request_id} ${end.type}: ${text}`);

socket.send(JSON.stringify({ type: 'auth.delete', id: 'demo-key' }));
console.log(`deleted: ${(await next('auth.ack', 'error')).id}`);
socket.close();
await gateway.close();
await rm(authDir, { recursive: true, force: true });
