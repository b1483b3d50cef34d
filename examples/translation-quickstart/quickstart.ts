import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { Relay } from '@switchyard/relay';
import { createDataPlane } from '@switchyard/server-http';

// The demo provider speaks OpenAI chat completions; the client below speaks Anthropic Messages.
const relay = new Relay({ providers: [{ name: 'demo', kind: 'mock', models: ['demo-model'] }] });
const dataPlane = createDataPlane({ relay, apiKeys: ['sk-local'] });
const server = createServer(async (req, res) => {
  if (!(await dataPlane.handle(req, res))) res.writeHead(404).end();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

const client = new Anthropic({ apiKey: 'sk-local', baseURL: `http://127.0.0.1:${port}` });
const stream = client.messages.stream({ model: 'demo-model', max_tokens: 200, messages: [{ role: 'user', content: 'Hello!' }] });
const message = await stream.finalMessage();
console.log(message.content[0]?.type === 'text' ? message.content[0].text : '', '|', message.stop_reason, message.usage.output_tokens);
server.close();
