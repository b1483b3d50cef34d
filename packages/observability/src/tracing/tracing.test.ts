import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { stagedLookup, startTcpProxy } from '@switchyard/test-support';
import { EventEmitter } from 'eventemitter3';
import { tracingConfigSchema } from '../config/schemas.js';
import { observeGateway, observeWorkflow } from '../observe.js';
import { attemptEnd, type Receiver, requestEnd, requestStart, startReceiver } from '../testing/fixtures.js';
import { createTracing } from './tracing.js';

const T = Date.parse('2026-03-01T00:00:00Z');

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number };
}

/** Decodes OTLP/HTTP JSON export requests into spans (with the service name of their resource). */
function decodeOtlp(receiver: Receiver): (OtlpSpan & { service: string })[] {
  return receiver.received.flatMap((request) => {
    assert.equal(request.url, '/v1/traces');
    assert.match(String(request.headers['content-type']), /application\/json/);
    const body = request.json() as {
      resourceSpans: {
        resource: { attributes: { key: string; value: { stringValue?: string } }[] };
        scopeSpans: { spans: OtlpSpan[] }[];
      }[];
    };
    return body.resourceSpans.flatMap((rs) => {
      const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
      return rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ ...span, service })));
    });
  });
}

const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};
const ms = (nanos: string) => Number(BigInt(nanos) / 1_000_000n);
const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const ERROR = 2;

async function setup(settings: Record<string, unknown> = {}) {
  const collector = await startReceiver();
  after(() => collector.close());
  const clock = new FakeScheduler(T);
  const config = tracingConfigSchema.parse({
    enabled: true,
    exporter: 'otlp',
    endpoint: `${collector.url}/v1/traces`,
    service_name: 'gw-test',
    sample_rate: 1,
    ...settings,
  });
  const tracing = createTracing(config, { clock });
  after(() => tracing.shutdown());
  const relay = new EventEmitter();
  observeGateway({ relay }, { tracing: tracing.gateway });
  return { collector, clock, tracing, relay };
}

describe('traces reach a local OTLP/HTTP receiver', () => {
  test('one span per request, with a selection span and an attempt span for each upstream try', async () => {
    const { collector, tracing, relay } = await setup();
    relay.emit('request:start', requestStart({ requestId: 'r1', at: T }));
    relay.emit(
      'attempt:end',
      attemptEnd({
        requestId: 'r1',
        attempt: 1,
        provider: 'openai',
        at: T + 300,
        latencyMs: 250,
        outcome: 'error',
        httpStatus: 503,
        errorType: 'upstream_error',
      }),
    );
    relay.emit('attempt:end', attemptEnd({ requestId: 'r1', attempt: 2, provider: 'anthropic', at: T + 900, latencyMs: 500 }));
    relay.emit(
      'request:end',
      requestEnd({ requestId: 'r1', provider: 'anthropic', attempts: 2, at: T + 1000, tokens: { input: 5, output: 8 } }),
    );
    assert.equal(tracing.gateway.openRequests, 0);
    await tracing.flush();
    await collector.waitFor(1);
    const spans = decodeOtlp(collector);
    assert.equal(spans.length, 5);
    const root = spans.find((s) => s.name === 'gateway.request')!;
    assert.equal(root.kind, SERVER);
    assert.equal(root.parentSpanId ?? '', '');
    assert.equal(root.service, 'gw-test');
    assert.deepEqual([ms(root.startTimeUnixNano), ms(root.endTimeUnixNano)], [T, T + 1000]);
    assert.equal(attr(root, 'switchyard.request_id'), 'r1');
    assert.equal(attr(root, 'gen_ai.provider.name'), 'anthropic');
    assert.equal(Number(attr(root, 'gen_ai.usage.output_tokens')), 8);
    const children = spans.filter((s) => s !== root);
    assert.ok(
      children.every((s) => s.traceId === root.traceId && s.parentSpanId === root.spanId),
      'every child hangs under the request span',
    );
    const timeline = children
      .map((s) => [
        s.name,
        s.kind,
        ms(s.startTimeUnixNano) - T,
        ms(s.endTimeUnixNano) - T,
        attr(s, 'gen_ai.provider.name') ?? attr(s, 'switchyard.selected'),
        s.status?.code ?? 0,
      ])
      .sort((a, b) => (a[2] as number) - (b[2] as number) || String(b[0]).localeCompare(String(a[0])));
    assert.deepEqual(timeline, [
      ['gateway.select', INTERNAL, 0, 50, 'openai', 0],
      ['gateway.attempt', CLIENT, 50, 300, 'openai', ERROR],
      ['gateway.select', INTERNAL, 300, 400, 'anthropic', 0],
      ['gateway.attempt', CLIENT, 400, 900, 'anthropic', 0],
    ]);
  });

  test('a request the client closed: its spans say so, with no error status', async () => {
    const { collector, tracing, relay } = await setup();
    relay.emit('request:start', requestStart({ requestId: 'r-gone', at: T }));
    relay.emit(
      'attempt:end',
      attemptEnd({
        requestId: 'r-gone',
        provider: 'openai',
        at: T + 300,
        latencyMs: 250,
        outcome: 'client_closed',
        httpStatus: null,
        errorType: 'client_closed',
      }),
    );
    relay.emit(
      'request:end',
      requestEnd({
        requestId: 'r-gone',
        provider: 'openai',
        at: T + 310,
        outcome: 'client_closed',
        httpStatus: 499,
        errorType: 'client_closed',
      }),
    );
    await tracing.flush();
    await collector.waitFor(1);
    const spans = decodeOtlp(collector).filter((s) => s.name !== 'gateway.select');
    assert.deepEqual(spans.map((s) => [s.name, attr(s, 'switchyard.client_closed'), attr(s, 'error.type'), s.status?.code ?? 0]).sort(), [
      ['gateway.attempt', true, undefined, 0],
      ['gateway.request', true, undefined, 0],
    ]);
  });

  test('trace context: a client traceparent becomes the parent, and upstream headers name the attempt span', async () => {
    const { collector, clock, tracing, relay } = await setup();
    const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    tracing.gateway.continueFrom('r2', { traceparent: `00-${clientTrace}-${clientSpan}-01`, tracestate: 'vendor=1' });
    relay.emit('request:start', requestStart({ requestId: 'r2', at: clock.now() }));
    await clock.advance(40);
    const headers = tracing.gateway.upstreamHeaders('r2', 'openai', 1);
    assert.match(headers.traceparent!, new RegExp(`^00-${clientTrace}-[0-9a-f]{16}-01$`));
    assert.equal(headers.tracestate, 'vendor=1');
    assert.deepEqual(tracing.gateway.upstreamHeaders('r2', 'openai', 1), headers, 'same attempt, same span');
    await clock.advance(200);
    relay.emit('attempt:end', attemptEnd({ requestId: 'r2', attempt: 1, at: clock.now(), latencyMs: 200 }));
    relay.emit('request:end', requestEnd({ requestId: 'r2', at: clock.now() + 5 }));
    await tracing.flush();
    await collector.waitFor(1);
    const spans = decodeOtlp(collector);
    const root = spans.find((s) => s.name === 'gateway.request')!;
    assert.equal(root.traceId, clientTrace);
    assert.equal(root.parentSpanId, clientSpan);
    const attempt = spans.find((s) => s.name === 'gateway.attempt')!;
    assert.equal(attempt.spanId, headers.traceparent!.split('-')[2], 'the upstream sees the attempt span as its parent');
    assert.equal(ms(attempt.startTimeUnixNano), T + 40);
    assert.equal(ms(attempt.endTimeUnixNano), T + 240);
    assert.deepEqual(tracing.gateway.upstreamHeaders('unknown', 'openai', 1), {});
  });

  test('sample_rate 0 records nothing new, but still propagates (unsampled) and follows a sampled parent', async () => {
    const { collector, tracing, relay } = await setup({ sample_rate: 0 });
    relay.emit('request:start', requestStart({ requestId: 'a', at: T }));
    assert.match(tracing.gateway.upstreamHeaders('a', 'openai', 1).traceparent!, /-00$/);
    relay.emit('request:end', requestEnd({ requestId: 'a', at: T + 10 }));
    tracing.gateway.continueFrom('b', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    relay.emit('request:start', requestStart({ requestId: 'b', at: T }));
    relay.emit(
      'request:end',
      requestEnd({ requestId: 'b', attempts: 0, at: T + 10, outcome: 'error', httpStatus: 503, errorType: 'all_providers_in_cooldown' }),
    );
    await tracing.flush();
    await collector.waitFor(1);
    const spans = decodeOtlp(collector);
    assert.ok(
      spans.every((s) => s.traceId === '0af7651916cd43dd8448eb211c80319c'),
      'only the sampled-parent request was exported',
    );
    const root = spans.find((s) => s.name === 'gateway.request')!;
    assert.equal(root.status?.code, ERROR);
    const select = spans.find((s) => s.name === 'gateway.select')!;
    assert.equal(select.status?.code, ERROR, 'a request that never reached upstream shows a failed selection');
  });

  test('workflow events become spans: subcommands with their duration, transitions, gates and agent jobs', async () => {
    const { collector, tracing } = await setup();
    const workflow = new EventEmitter();
    observeWorkflow(workflow, { tracing: tracing.workflow });
    workflow.emit('workflow:subcommand', { command: 'feature create', exitCode: 3, durationMs: 120, at: T + 120 });
    workflow.emit('workflow:transition', { featureSlug: 'f', wpSequence: 1, from: 'doing', to: 'review', actor: 'a', at: T });
    workflow.emit('workflow:gate_failed', { featureSlug: 'f', wpSequence: null, transition: 'review->done', ruleIds: ['r1', 'r2'], at: T });
    workflow.emit('workflow:agent_job', { jobId: 'j1', state: 'Pending', at: T });
    workflow.emit('workflow:agent_job', { jobId: 'j1', state: 'Running', at: T + 10 });
    workflow.emit('workflow:agent_job', { jobId: 'j1', state: 'Failed', at: T + 500 });
    await tracing.flush();
    await collector.waitFor(1);
    const byName = new Map(decodeOtlp(collector).map((s) => [s.name, s]));
    const yard = byName.get('yard feature create')!;
    assert.deepEqual([ms(yard.startTimeUnixNano), ms(yard.endTimeUnixNano), yard.status?.code], [T, T + 120, ERROR]);
    assert.ok(byName.has('workflow.transition'));
    assert.equal(byName.get('workflow.gate')!.status?.code, ERROR);
    const job = byName.get('workflow.agent_job')!;
    assert.deepEqual([ms(job.startTimeUnixNano), ms(job.endTimeUnixNano), attr(job, 'workflow.job_state')], [T, T + 500, 'Failed']);
  });
});

test('the zipkin exporter posts Zipkin v2 JSON to its endpoint', async () => {
  const zipkin = await startReceiver(() => ({ status: 202 }));
  after(() => zipkin.close());
  const tracing = createTracing(
    tracingConfigSchema.parse({
      enabled: true,
      exporter: 'zipkin',
      endpoint: `${zipkin.url}/api/v2/spans`,
      service_name: 'gw-zipkin',
      sample_rate: 1,
    }),
    { clock: new FakeScheduler(T) },
  );
  after(() => tracing.shutdown());
  tracing.gateway.onRequestStart(requestStart({ requestId: 'z', at: T }));
  tracing.gateway.onAttemptEnd(attemptEnd({ requestId: 'z', at: T + 100, latencyMs: 80 }));
  tracing.gateway.onRequestEnd(requestEnd({ requestId: 'z', at: T + 120 }));
  await tracing.flush();
  await zipkin.waitFor(1);
  const spans = zipkin.received.flatMap(
    (r) => r.json() as { name: string; parentId?: string; id: string; localEndpoint: { serviceName: string } }[],
  );
  assert.equal(zipkin.received[0]!.url, '/api/v2/spans');
  const root = spans.find((s) => s.name === 'gateway.request')!;
  assert.equal(root.localEndpoint.serviceName, 'gw-zipkin');
  assert.equal(spans.filter((s) => s.parentId === root.id).length, 2);
});

describe('with `lookup`, the exporter resolves the collector with it at each connection', () => {
  const HOST = 'collector.staged.test';
  const paths = { otlp: '/v1/traces', zipkin: '/api/v2/spans' } as const;

  /** A collector behind a connection-counting proxy, and a tracer exporting to it at HOST through `answer`. */
  async function exportOneRequest(exporter: 'otlp' | 'zipkin', answer: string | Error) {
    const collector = await startReceiver(() => ({ status: 202 }));
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(collector.url).port) });
    after(async () => {
      await proxy.close();
      await collector.close();
    });
    // No real resolver knows HOST: only the lookup given makes it 127.0.0.1.
    const dns = stagedLookup((hostname) => (hostname === HOST ? answer : new Error(`getaddrinfo ENOTFOUND ${hostname}`)));
    const config = tracingConfigSchema.parse({
      enabled: true,
      exporter,
      endpoint: `http://${HOST}:${proxy.port}${paths[exporter]}`,
      sample_rate: 1,
    });
    const tracing = createTracing(config, { clock: new FakeScheduler(T), lookup: dns.lookup });
    tracing.gateway.onRequestStart(requestStart({ requestId: 'looked-up', at: T }));
    tracing.gateway.onRequestEnd(requestEnd({ requestId: 'looked-up', at: T + 20 }));
    // The last export's failure, if it failed, rejects the shutdown that flushed it.
    const failure = await tracing.shutdown().then(
      () => undefined,
      (error: NodeJS.ErrnoException) => error,
    );
    return { collector, proxy, dns, failure };
  }

  for (const exporter of ['otlp', 'zipkin'] as const) {
    test(`${exporter}: the spans reach the address the lookup gives`, async () => {
      const { collector, dns, failure } = await exportOneRequest(exporter, '127.0.0.1');
      assert.equal(failure, undefined);
      await collector.waitFor(1);
      assert.equal(collector.received[0]!.url, paths[exporter]);
      assert.ok(dns.asked.includes(HOST));
    });

    test(`${exporter}: a lookup that refuses sends nothing`, async () => {
      const refused = Object.assign(new Error(`refusing to connect to ${HOST}`), { code: 'SSRF_BLOCKED' });
      const { collector, proxy, dns, failure } = await exportOneRequest(exporter, refused);
      assert.ok(dns.asked.includes(HOST), 'the export was attempted');
      assert.equal(failure?.code, 'SSRF_BLOCKED');
      assert.equal(proxy.accepted, 0);
      assert.equal(collector.received.length, 0);
    });
  }
});

test('jaeger uses the OTLP exporter at its endpoint', () => {
  const config = tracingConfigSchema.parse({ enabled: true, exporter: 'jaeger' });
  assert.equal(config.endpoint, 'http://127.0.0.1:4318/v1/traces');
});
