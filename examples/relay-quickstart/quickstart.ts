import { MemorySink, Relay } from '@switchyard/relay';

// `mock` is a built-in provider kind that answers in process: no API key, no network.
const relay = new Relay({ providers: [{ name: 'demo', kind: 'mock', models: ['demo-*'] }] });
relay.events.on('request:end', (e) => console.log(`${e.outcome} via ${e.provider} in ${e.attempts} attempt(s)`));

const body = { model: 'demo-model', messages: [{ role: 'user', content: 'Hello!' }] };
const sink = new MemorySink(); // a node:http server passes nodeResponseSink(res) instead
await relay.handle(
  { requestId: 'req-1', ingress: 'openai-chat', model: body.model, stream: false, body, rawBody: Buffer.from(JSON.stringify(body)) },
  sink,
);
console.log(sink.status, sink.headers['x-switchyard-provider']);
console.log(sink.text());
relay.close();
