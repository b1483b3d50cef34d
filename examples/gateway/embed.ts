import { Gateway, parseConfig } from '@switchyard/server-http';
import OpenAI from 'openai';

// Two demo providers serve one model; `mock` answers in process (no key, no network).
const config = parseConfig(`
port: 0
api-keys: [sk-local]
providers:
  first:  { kind: mock, models: [demo-model] }
  second: { kind: mock, models: [demo-model] }
server: { operations: { load_balancing: { strategy: priority } } }
metrics: { enabled: false }
`);
const gateway = await Gateway.start({ config, logDestination: { write() {} } });
const client = new OpenAI({ apiKey: 'sk-local', baseURL: `${gateway.url}/v1` });
const ask = async (content: string) => {
  const { data, response } = await client.chat.completions
    .create({ model: 'demo-model', messages: [{ role: 'user', content }] })
    .withResponse();
  console.log(`${response.headers.get('x-switchyard-provider')}: ${data.choices[0]?.message.content}`);
};

await ask('hello');
gateway.cooldowns.cooldown('first', 60_000); // as a run of 429s would: 'first' sits out a minute
await ask('still there?');
await gateway.close();
