/**
 * `yard serve` honours `tracing:` in the config: with `tracing.enabled`, the workflow's events
 * become OpenTelemetry spans exported over OTLP/HTTP to the configured collector (here one on
 * loopback that records what it receives), under the configured service name; spans still
 * queued are exported when the server stops. A bad tracing section refuses the start.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { serveInProcess, type TempRepo, tempRepo, yard } from './helpers.js';

interface OtlpSpan {
  name: string;
  attributes: { key: string; value: { stringValue?: string } }[];
}

async function startCollector() {
  const spans: (OtlpSpan & { service: string | undefined })[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => void (body += chunk.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body) as {
        resourceSpans: { resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const rs of parsed.resourceSpans) {
        const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
        for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans };
}

const repos: TempRepo[] = [];
after(async () => {
  for (const repo of repos) await repo.cleanup();
});

async function repoWithConfig(config: string): Promise<TempRepo> {
  const repo = await tempRepo('yard-trace-');
  repos.push(repo);
  await mkdir(join(repo.root, '.agileplus'));
  await writeFile(join(repo.root, '.agileplus', 'config.yaml'), config);
  return repo;
}

test('tracing.enabled: transitions made through yard serve reach the collector as spans, flushed at stop', async () => {
  const collector = await startCollector();
  const repo = await repoWithConfig(
    `tracing:\n  enabled: true\n  exporter: otlp\n  endpoint: ${collector.url}/v1/traces\n  service_name: yard-under-test\n  sample_rate: 1\n`,
  );
  const server = await serveInProcess(repo.root, ['--http', '0']);
  const address = server.http!;
  const post = (path: string, body: object) =>
    fetch(`${address}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal((await post('/features', { slug: 'traced', title: 'Traced', actor: 'alice' })).status, 201);
  assert.equal((await post('/features/traced/transition', { to: 'SPECIFIED', actor: 'alice' })).status, 200);
  assert.equal(await server.stop(), 0);

  const transitions = collector.spans.filter((s) => s.name === 'workflow.transition');
  assert.equal(transitions.length, 1, JSON.stringify(collector.spans.map((s) => s.name)));
  const attribute = (key: string) => transitions[0]!.attributes.find((a) => a.key === key)?.value.stringValue;
  assert.deepEqual(
    [attribute('workflow.feature'), attribute('workflow.from'), attribute('workflow.to'), attribute('workflow.actor')],
    ['traced', 'CREATED', 'SPECIFIED', 'alice'],
  );
  assert.equal(transitions[0]!.service, 'yard-under-test');
});

test('a tracing section that breaks observability’s schema refuses the start, naming the field', async () => {
  const repo = await repoWithConfig('tracing:\n  enabled: true\n  exporter: carrier-pigeon\n');
  const r = await yard(['serve', '--http', '0', '--output', 'json'], { cwd: repo.root });
  assert.equal(r.code, 2, r.stderr);
  const error = JSON.parse(r.stderr) as { error: { message: string; details: { field: string } } };
  assert.equal(error.error.details.field, 'config.tracing.exporter');
});
