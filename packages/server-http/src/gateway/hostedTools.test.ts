import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { type FakeOpenAi, startFakeOpenAi } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';
import { parseConfig } from './config/load.js';
import type { Gateway } from './gateway.js';

const gateways: Gateway[] = [];
const fakes: FakeOpenAi[] = [];
after(async () => {
  for (const gateway of gateways) await gateway.close();
  for (const fake of fakes) await fake.close();
});

/** A Responses request (as Codex sends one) with a function tool and a hosted `web_search`. */
const responsesBody = (model: string) => ({
  model,
  input: 'hi',
  tools: [
    { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
    { type: 'web_search', external_web_access: false },
  ],
});

async function start(yaml: (fakeUrl: string) => string) {
  const fake = await startFakeOpenAi();
  fakes.push(fake);
  const { gateway } = await startTestGateway(yaml(fake.url));
  gateways.push(gateway);
  const send = (model: string) =>
    fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(responsesBody(model)),
    });
  const posts = () => fake.requests.filter((r) => r.method === 'POST');
  return { send, posts };
}

const provider = (name: string, url: string, model: string, extra = '') => `
  ${name}:
    kind: openai-compatible
    base_url: ${url}
    models: [${model}]
    health_check: { enabled: false }${extra}`;

test('translation.hosted_tools: drop by default (the tool left out, named in x-switchyard-dropped-fields); refuse per provider keeps the 400', async () => {
  const { send, posts } = await start(
    (url) => `
port: 0
metrics: { enabled: false }
server: { operations: { cache: { enabled: false } } }
providers:${provider('lenient', url, 'm-drop')}${provider('strict', url, 'm-refuse', '\n    translation: { hosted_tools: refuse }')}
`,
  );

  const dropped = await send('m-drop');
  assert.equal(dropped.status, 200, await dropped.clone().text());
  assert.equal(dropped.headers.get('x-switchyard-dropped-fields'), 'tools[1]');
  const answer = (await dropped.json()) as { output: { type: string; name?: string }[] };
  assert.ok(answer.output.some((item) => item.type === 'function_call' && item.name === 'exec_command'));
  const upstreamTools = (posts()[0]?.body?.tools ?? []) as { function: { name: string } }[];
  assert.deepEqual(
    upstreamTools.map((t) => t.function.name),
    ['exec_command'],
  );

  const refused = await send('m-refuse');
  assert.equal(refused.status, 400);
  const error = ((await refused.json()) as { error: { code: string; param: string; message: string } }).error;
  assert.equal(error.code, 'unsupported_translation');
  assert.equal(error.param, 'tools[1].type');
  assert.match(error.message, /web_search/);
  assert.equal(posts().length, 1, 'the refused request never went upstream');
});

test('translation.hosted_tools: refuse at the top level applies to every provider; a provider may set drop back', async () => {
  const { send, posts } = await start(
    (url) => `
port: 0
metrics: { enabled: false }
server: { operations: { cache: { enabled: false } } }
translation: { hosted_tools: refuse }
providers:${provider('strict', url, 'm-refuse')}${provider('lenient', url, 'm-drop', '\n    translation: { hosted_tools: drop }')}
`,
  );
  const refused = await send('m-refuse');
  assert.equal(refused.status, 400);
  assert.equal(posts().length, 0);
  const dropped = await send('m-drop');
  assert.equal(dropped.status, 200);
  assert.equal(dropped.headers.get('x-switchyard-dropped-fields'), 'tools[1]');
});

test('translation.hosted_tools: anything but drop or refuse is refused at load, naming the key', () => {
  assert.throws(() => parseConfig('translation: { hosted_tools: ignore }\n'), /translation\.hosted_tools/);
  assert.throws(
    () => parseConfig('providers: { p: { kind: openai, translation: { hosted_tools: keep } } }\n'),
    /providers\.p\.translation\.hosted_tools/,
  );
});
