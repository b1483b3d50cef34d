/**
 * Fuzzing every JSON route of the gateway: each route that takes a JSON body
 * (the control plane's, enumerated from /openapi.json so new routes are
 * covered without editing this file, and the data plane's generate routes)
 * gets FUZZ_RUNS random bodies: fast-check JSON values, arbitrary values
 * serialized, objects shaped like the route's schema with random field
 * values, invalid UTF-8, huge numbers, deep nesting. The management and
 * operations routes without a body but with path or query parameters get as
 * many random parameter values. Whatever comes in, the
 * answer is never a 500, nothing is thrown unhandled, and /health still
 * answers afterwards. The relay talks to fake upstreams on 127.0.0.1 only.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type FakeUpstream, startFakeAnthropic, startFakeGemini, startFakeOpenAi } from '@switchyard/test-support';
import fc from 'fast-check';
import { Pool } from 'undici';
import { startTestGateway } from '../../test/startTestGateway.js';
import type { Gateway } from './gateway.js';

/** Bodies per route (the spec's 1,000; FUZZ_RUNS overrides for a quick local pass). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const KEY = 'fuzz-management-key';

const dir = await mkdtemp(join(tmpdir(), 'gateway-fuzz-'));
const fakes: FakeUpstream[] = [];
let gateway: Gateway;
let http: Pool;
const unhandled: unknown[] = [];
const onUnhandled = (error: unknown) => unhandled.push(error);

before(async () => {
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);
  const [openai, anthropic, gemini] = await Promise.all([startFakeOpenAi({}), startFakeAnthropic({}), startFakeGemini({})]);
  fakes.push(openai, anthropic, gemini);
  const provider = (kind: string, url: string) =>
    `    kind: ${kind}\n    base_url: ${url}\n    models: ["*"]\n    health_check: { enabled: false }\n`;
  const yaml = `
port: 0
auth-dir: ${join(dir, 'auths')}
remote-management: { secret-key: ${KEY} }
auth: { refresh: { enabled: false } } # no sign-in flow may leave the machine
server: { operations: { connection_pool: { request_timeout: 10s } } } # a hung upstream shows as 504, not a stalled run
providers:
  openai:
${provider('openai-compatible', openai.url)}    preview_models: [preview-model]
  anthropic:
${provider('anthropic', anthropic.url)}  gemini:
${provider('gemini', gemini.url)}  demo:
    kind: mock
    models: [demo-model]
metrics: { enabled: false }
logging: { level: error }
`;
  ({ gateway } = await startTestGateway(yaml));
  for (const name of ['anthropic', 'gemini', 'openai'])
    await gateway.credentials.manager.add({ id: `${name}-key`, provider: name, type: 'api_key', token: `tok-${name}` });
  http = new Pool(gateway.url, { connections: 16, keepAliveTimeout: 30_000 });
});

after(async () => {
  await http?.close();
  await gateway?.close();
  await Promise.all(fakes.map((f) => f.close()));
  await rm(dir, { recursive: true, force: true });
  process.off('unhandledRejection', onUnhandled);
  process.off('uncaughtException', onUnhandled);
});

// ---- bodies ---------------------------------------------------------------

type Schema = Record<string, unknown>;
type Body = string | Uint8Array;

/** Any host in a fuzzed string becomes one no test may reach anyway, so no DNS lookup ever leaves the machine. */
const defuse = (text: string) => text.replace(/\b(https?:\/\/)(?!127\.0\.0\.1)[^\s"/]*/gi, '$1127.0.0.1:9');

/** Percent-encodes a fuzzed string; lone surrogates (which URLs cannot carry) become U+FFFD. */
const encode = (value: string) =>
  encodeURIComponent(value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));

const nested = (depth: number, open: string, close: string, leaf = '1') => open.repeat(depth) + leaf + close.repeat(depth);

/** Texts that have broken JSON handlers before: huge numbers, deep nesting, lone surrogates, prototype keys. */
const TRICKY_TEXTS = [
  '',
  'null',
  '[]',
  '"just a string"',
  '{"model": 1e400}',
  '{"value": 123456789012345678901234567890}',
  '{"limit": -1e308, "value": 1e-400}',
  nested(2_000, '[', ']'),
  nested(2_000, '{"a":', '}'),
  '{"model":"\\ud800","messages":[{"role":"user","content":"\\udfff"}]}',
  '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}',
  `{"model":"gpt-4o","messages":[{"role":"user","content":${nested(1_500, '[', ']', '{"type":"text"}')}}]}`,
  `{"model":"gpt-4o","messages":${nested(1_500, '[', ']', '{}')}}`,
  `{"model":"gpt-4o","messages":[{"role":"user","content":"${'x'.repeat(200_000)}"}]}`,
  '{"a":1,"a":2}',
  '\u0000',
  '{',
];

const strings = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', 'gpt-4o', 'demo-model', '$TOKEN$', '../../etc/passwd', 'openai', 'x'.repeat(5_000), '\u0000', '\ud800'),
  },
);
const numbers = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 53, 0.5, -0));

function resolve(schema: Schema, components: Record<string, Schema>): Schema {
  const ref = schema.$ref;
  return typeof ref === 'string' ? resolve(components[ref.split('/').pop()!] ?? {}, components) : schema;
}

/** Values shaped like `schema`, each field sometimes replaced by any JSON value. */
function shaped(schema: Schema, components: Record<string, Schema>, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, components);
  const exact = shapedExactly(s, components, depth);
  return depth > 4 ? exact : fc.oneof({ weight: 5, arbitrary: exact }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });
}

function shapedExactly(s: Schema, components: Record<string, Schema>, depth: number): fc.Arbitrary<unknown> {
  const variants = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (variants?.length) return fc.oneof(...variants.map((v) => shaped(v, components, depth + 1)));
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if ('const' in s) return fc.constant(s.const);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const properties = (s.properties ?? {}) as Record<string, Schema>;
      const record = fc.record(
        Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, shaped(value, components, depth + 1)])),
        { requiredKeys: [] },
      );
      const extra = fc.dictionary(strings, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 });
      return fc.tuple(record, extra, fc.boolean()).map(([known, more, withExtra]) => (withExtra ? { ...more, ...known } : known));
    }
    case 'array':
      return fc.array(shaped((s.items ?? {}) as Schema, components, depth + 1), { maxLength: 4 });
    case 'string':
      return strings;
    case 'integer':
    case 'number':
      return numbers;
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Every kind of body, for a route whose schema is `schema`. */
function bodies(schema: fc.Arbitrary<unknown>): fc.Arbitrary<Body> {
  const serialize = (value: unknown) => {
    try {
      return JSON.stringify(value) ?? '';
    } catch {
      return '';
    }
  };
  return fc.oneof(
    { weight: 4, arbitrary: schema.map((v) => defuse(serialize(v))) },
    { weight: 2, arbitrary: fc.json({ maxDepth: 3 }).map(defuse) },
    { weight: 2, arbitrary: fc.anything({ maxDepth: 3 }).map((v) => defuse(serialize(v))) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Uint8Array.from([0x7b, 0xff, ...bytes])) },
    { weight: 1, arbitrary: fc.constantFrom(...TRICKY_TEXTS) },
  );
}

// ---- the data plane's shapes ----------------------------------------------

const anyJson = fc.jsonValue({ maxDepth: 2 });
const models = fc.oneof(fc.constantFrom('gpt-4o', 'claude-sonnet-4', 'gemini-2.5-pro', 'demo-model', 'preview-model'), strings);
const roles = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('user', 'assistant', 'system', 'tool', 'developer', 'model', 'function') },
  { weight: 1, arbitrary: strings },
);
const parts = fc.array(
  fc.oneof(
    fc.record(
      { type: fc.constantFrom('text', 'input_text', 'image_url', 'image', 'tool_use', 'tool_result'), text: strings },
      { requiredKeys: [] },
    ),
    fc.record({ text: strings, inlineData: fc.record({ mimeType: strings, data: strings }) }, { requiredKeys: [] }),
    anyJson,
  ),
  { maxLength: 3 },
);
const content = fc.oneof({ weight: 4, arbitrary: strings }, { weight: 2, arbitrary: parts }, { weight: 1, arbitrary: anyJson });
const tools = fc.array(
  fc.oneof(
    fc.record(
      { type: fc.constant('function'), function: fc.record({ name: strings, parameters: anyJson }, { requiredKeys: [] }) },
      { requiredKeys: [] },
    ),
    fc.record({ name: strings, input_schema: anyJson, description: strings }, { requiredKeys: [] }),
    anyJson,
  ),
  { maxLength: 2 },
);
const common = {
  model: models,
  stream: fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: anyJson }),
  max_tokens: numbers,
  temperature: numbers,
  tools,
};
/** Mostly with the fields a request cannot do without (so the translators see them), sometimes with any subset. */
function request<T extends Record<string, fc.Arbitrary<unknown>>>(fields: T, required: (keyof T & string)[]) {
  return fc.oneof(
    { weight: 3, arbitrary: fc.record(fields, { requiredKeys: required }) },
    { weight: 1, arbitrary: fc.record(fields, { requiredKeys: [] }) },
  );
}
const message = fc.record({ role: roles, content }, { requiredKeys: ['role', 'content'] });
const chatShape = request({ ...common, messages: fc.oneof(fc.array(message, { maxLength: 4 }), anyJson) }, ['model', 'messages']);
const responsesShape = request(
  {
    ...common,
    input: fc.oneof(strings, fc.array(fc.record({ role: roles, content, type: strings }, { requiredKeys: [] }), { maxLength: 3 })),
    instructions: strings,
  },
  ['model', 'input'],
);
const messagesShape = request({ ...common, system: fc.oneof(strings, parts), messages: fc.array(message, { maxLength: 4 }) }, [
  'model',
  'messages',
  'max_tokens',
]);
const geminiShape = fc.record(
  {
    contents: fc.oneof(fc.array(fc.record({ role: roles, parts }, { requiredKeys: [] }), { maxLength: 3 }), anyJson),
    systemInstruction: fc.record({ parts }, { requiredKeys: [] }),
    generationConfig: fc.record({ maxOutputTokens: numbers, temperature: numbers }, { requiredKeys: [] }),
    tools: anyJson,
  },
  { requiredKeys: [] },
);

/** A route to fuzz: method, path (with random path parameters filled in) and body shape. */
interface FuzzRoute {
  name: string;
  method: string;
  path: fc.Arbitrary<string>;
  body: fc.Arbitrary<Body>;
  management: boolean;
}

const geminiModel = fc.oneof(fc.constantFrom('gemini-2.5-pro', 'demo-model'), strings.map(encode));
const dataPlaneRoutes: FuzzRoute[] = [
  { name: 'POST /v1/chat/completions', path: fc.constant('/v1/chat/completions'), body: bodies(chatShape) },
  { name: 'POST /v1/responses', path: fc.constant('/v1/responses'), body: bodies(responsesShape) },
  { name: 'POST /v1/messages', path: fc.constant('/v1/messages'), body: bodies(messagesShape) },
  { name: 'POST /v1/messages/count_tokens', path: fc.constant('/v1/messages/count_tokens'), body: bodies(messagesShape) },
  ...['generateContent', 'streamGenerateContent', 'streamGenerateContent?alt=sse', 'countTokens'].map((action) => ({
    name: `POST /v1beta/models/{model}:${action}`,
    path: geminiModel.map((model) => `/v1beta/models/${model}:${action}`),
    body: bodies(geminiShape),
  })),
].map((route) => ({ ...route, method: 'POST', management: false }));

/** Query parameters held fixed: `follow=true` turns the log route into an endless stream. */
const FIXED_QUERY: Record<string, string> = { follow: 'false' };

/**
 * The control plane's JSON routes, from /openapi.json: every operation with
 * an `application/json` request body gets random bodies; every other
 * `/v0/` operation with path or query parameters gets random parameters.
 */
async function controlPlaneRoutes(): Promise<FuzzRoute[]> {
  const response = await http.request({ method: 'GET', path: '/openapi.json' });
  const doc = (await response.body.json()) as {
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> }; parameters?: Schema[] }>>;
    components?: { schemas?: Record<string, Schema> };
  };
  const components = doc.components?.schemas ?? {};
  const routes: FuzzRoute[] = [];
  for (const [template, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      const queryNames = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => String(p.name));
      const params = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      const hasBody = schema !== undefined;
      if (!hasBody && !(template.startsWith('/v0/') && (params.length > 0 || queryNames.length > 0))) continue;
      // Sign-in routes start device flows against the providers' real servers: fuzzing them would leave the machine.
      if (template.startsWith('/v0/oauth')) continue;
      const value = fc.oneof(
        fc.constantFrom('openai', 'anthropic', 'demo', 'openai-key', 'anthropic-key.json', 'nope', '-1', '1e3'),
        fc.nat({ max: 20 }).map(String),
        strings,
      );
      const path = fc
        .tuple(
          fc.array(value, { minLength: params.length, maxLength: params.length }),
          fc.array(value, { minLength: queryNames.length, maxLength: queryNames.length }),
          fc.boolean(),
        )
        .map(([values, queryValues, withQuery]) => {
          let filled = template;
          values.forEach((v, i) => {
            filled = filled.replace(`{${params[i]}}`, encode(v));
          });
          if ((hasBody && !withQuery) || queryNames.length === 0) return filled;
          return `${filled}?${queryNames.map((name, i) => `${name}=${encode(FIXED_QUERY[name] ?? queryValues[i]!)}`).join('&')}`;
        });
      routes.push({
        name: `${method.toUpperCase()} ${template}${hasBody ? '' : ' (parameters)'}`,
        method: method.toUpperCase(),
        path,
        body: hasBody ? bodies(shaped(schema, components)) : fc.constant(''),
        management: true,
      });
    }
  }
  return routes;
}

async function send(route: FuzzRoute, path: string, body: Body): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (route.management) headers.authorization = `Bearer ${KEY}`;
  const response = await http.request({ method: route.method as 'POST', path, headers, body, headersTimeout: 30_000, bodyTimeout: 30_000 });
  return { status: response.statusCode, text: await response.body.text() };
}

const preview = (body: Body) => (typeof body === 'string' ? body : Buffer.from(body).toString('latin1')).slice(0, 300);

test(`every JSON route survives ${RUNS} random bodies: never a 500, never a crash, /health answers after`, {
  timeout: 600_000,
}, async (t) => {
  const routes = [...(await controlPlaneRoutes()), ...dataPlaneRoutes];
  // The control plane has JSON routes to fuzz, and the enumeration found the ones known today.
  for (const known of [
    'POST /v0/management/auths',
    'PUT /v0/management/quota-exceeded/switch-project',
    'POST /v0/operations/providers/{p}/cooldown',
    'GET /v0/management/provider-a-quota (parameters)',
  ])
    assert.ok(
      routes.some((r) => r.name === known),
      `${known} is enumerated from /openapi.json`,
    );
  const statuses = new Map<string, Map<number, number>>();
  const started = Date.now();
  await Promise.all(
    routes.map((route) =>
      fc.assert(
        fc.asyncProperty(route.path, route.body, async (path, body) => {
          const { status, text } = await send(route, path, body);
          const seen = statuses.get(route.name) ?? new Map<number, number>();
          seen.set(status, (seen.get(status) ?? 0) + 1);
          statuses.set(route.name, seen);
          assert.ok(status !== 500 && status < 600, `${route.name} ${path} answered ${status} ${text.slice(0, 300)} to ${preview(body)}`);
        }),
        { numRuns: RUNS },
      ),
    ),
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  t.diagnostic(`${routes.length} routes × ${RUNS} bodies in ${seconds} s`);
  for (const [name, seen] of statuses)
    t.diagnostic(
      `${name}: ${[...seen]
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s}×${n}`)
        .join(' ')}`,
    );
  const health = await http.request({ method: 'GET', path: '/health' });
  assert.equal(health.statusCode, 200);
  // Providers the fuzzer cooled down make it `degraded`; what matters is that it answers.
  assert.match(((await health.body.json()) as { status: string }).status, /^(ok|degraded)$/);
  assert.deepEqual(unhandled, [], 'nothing was thrown unhandled');
});
