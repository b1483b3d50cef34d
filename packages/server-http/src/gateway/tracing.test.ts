/**
 * `tracing.enabled` on the gateway: requests become OpenTelemetry spans
 * exported to the configured collector (here a local OTLP/HTTP receiver),
 * a client's sampled `traceparent` is continued and passed on upstream under
 * the attempt's span, and spans still queued are exported when the gateway closes.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { eventually, startFakeOpenAi } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** A collector: records the spans of every OTLP/HTTP JSON export it receives. */
async function startCollector() {
  const spans: (OtlpSpan & { service: string | undefined })[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => void (body += chunk.toString()));
    req.on('end', () => {
      paths.push(req.url ?? '');
      const parsed = JSON.parse(body) as {
        resourceSpans: { resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const rs of parsed.resourceSpans) {
        const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue as string | undefined;
        for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url, spans, paths };
}

test('tracing.enabled: each request is a span tree at the collector, continuing the client traceparent', async () => {
  const collector = await startCollector();
  const { gateway } = await startTestGateway(`
port: 0
api-keys: [sk-client]
providers:
  alpha: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
tracing:
  enabled: true
  exporter: otlp
  endpoint: ${collector.url}/v1/traces
  service_name: gw-under-test
  sample_rate: 1
`);

  const clientTrace = '0af7651916cd43dd8448eb211c80319c';
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: 'Bearer sk-client',
      'content-type': 'application/json',
      'x-request-id': 'traced-1',
      traceparent: `00-${clientTrace}-b7ad6b7169203331-01`,
    },
    body: JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: 'hello' }] }),
  });
  assert.equal(response.status, 200);
  await response.arrayBuffer();

  // The batch processor exports on its own schedule; closing exports what is queued.
  await gateway.close();
  await eventually('the request span at the collector', () => collector.spans.some((s) => s.name === 'gateway.request'), 5000);
  assert.ok(collector.paths.every((path) => path === '/v1/traces'));
  const root = collector.spans.find((s) => s.name === 'gateway.request')!;
  assert.equal(root.service, 'gw-under-test');
  assert.equal(root.traceId, clientTrace, "the client's trace is continued");
  assert.equal(root.parentSpanId, 'b7ad6b7169203331');
  assert.equal(root.attributes.find((a) => a.key === 'switchyard.request_id')?.value.stringValue, 'traced-1');
  const attempt = collector.spans.find((s) => s.name === 'gateway.attempt');
  assert.ok(attempt, 'the upstream attempt has its own span');
  assert.equal(attempt.traceId, clientTrace);
});

test('tracing.enabled: the upstream call carries traceparent naming the attempt span as its parent', async () => {
  const collector = await startCollector();
  const upstream = await startFakeOpenAi();
  after(() => upstream.close());
  const { gateway } = await startTestGateway(`
port: 0
providers:
  alpha: { kind: openai-compatible, base_url: "${upstream.url}", models: [gpt-4o], health_check: { enabled: false } }
metrics: { enabled: false }
tracing: { enabled: true, exporter: otlp, endpoint: "${collector.url}/v1/traces", sample_rate: 1 }
`);
  const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${clientTrace}-00f067aa0ba902b7-01` },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] }),
  });
  assert.equal(response.status, 200);
  await response.arrayBuffer();
  await gateway.close();
  await eventually('the attempt span at the collector', () => collector.spans.some((s) => s.name === 'gateway.attempt'), 5000);

  const sent = upstream.requests.filter((r) => r.method === 'POST');
  assert.equal(sent.length, 1);
  const traceparent = String(sent[0]!.headers.traceparent ?? '');
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent);
  assert.ok(match, `a sampled W3C traceparent went upstream: ${traceparent}`);
  const attempt = collector.spans.find((s) => s.name === 'gateway.attempt')!;
  assert.equal(match[1], clientTrace, "the client's trace goes on upstream");
  assert.equal(match[2], attempt.spanId, "the upstream call's parent is the attempt span");
});
