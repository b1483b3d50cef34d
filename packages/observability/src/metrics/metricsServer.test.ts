import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { requirePromtool } from '@switchyard/test-support';
import { Registry } from 'prom-client';
import { requestEnd } from '../testing/fixtures.js';
import { GatewayMetrics } from './gatewayMetrics.js';
import { MetricsServer } from './metricsServer.js';
import { collectProcessMetrics } from './processMetrics.js';
import { WorkflowMetrics } from './workflowMetrics.js';

const promtool = requirePromtool();
const gateway = new GatewayMetrics();
const workflowRegistry = new Registry();
collectProcessMetrics(workflowRegistry);
const workflow = new WorkflowMetrics({ registry: workflowRegistry });
const server = new MetricsServer({ registries: [gateway.registry, workflowRegistry], port: 0, path: '/metrics' });
const { port } = await server.listen();
after(() => server.close());
const base = `http://127.0.0.1:${port}`;

test('GET /metrics serves every registry in the exposition format', async () => {
  gateway.onRequestEnd(requestEnd());
  workflow.onWorkflowAgentJob({ jobId: 'j1', state: 'Pending', at: 0 });
  const response = await fetch(`${base}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const body = await response.text();
  assert.match(body, /svc_requests_total\{provider="openai",model="gpt-4o",status="success"\} 1/);
  assert.match(body, /svc_workflow_agent_jobs\{state="Pending"\} 1/);
  assert.match(body, /process_cpu_seconds_total/);
});

test('HEAD answers without a body; other methods 405; other paths 404', async () => {
  const head = await fetch(`${base}/metrics`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), '');
  const post = await fetch(`${base}/metrics`, { method: 'POST' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET, HEAD');
  assert.equal((await fetch(`${base}/nope`)).status, 404);
  assert.equal((await fetch(`${base}/metrics?x=1`)).status, 200);
});

test('promtool check metrics passes on what the server serves (gateway, workflow and process metrics)', {
  skip: promtool.skip,
}, async () => {
  if (!promtool.available) return;
  const body = await (await fetch(`${base}/metrics`)).text();
  assert.doesNotThrow(() => promtool.checkMetrics(body));
});

test('a second listen is a no-op and close is idempotent', async () => {
  const extra = new MetricsServer({ registries: new Registry(), port: 0 });
  const first = await extra.listen();
  assert.equal((await extra.listen()).port, first.port);
  await extra.close();
  await extra.close();
});
