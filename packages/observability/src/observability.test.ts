import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import { createObservability } from './observability.js';
import { requestEnd } from './testing/fixtures.js';

const silent = () => ({ write: () => undefined });

test('with metrics and alerts off, nothing listens or serves, and the report says alerts are off', async () => {
  const obs = createObservability({ metrics: { enabled: false }, alerts: { enabled: false } }, { logDestination: silent() });
  assert.equal(obs.registry, undefined);
  assert.equal(obs.metricsServer, undefined);
  assert.equal(obs.alerts, undefined);
  assert.deepEqual(obs.alertsReport(), {
    enabled: false,
    evaluation_interval_ms: 15_000,
    evaluated_at: null,
    rules: [],
    notifications: [],
  });
  await obs.start();
  await obs.stop();
});

test('the metrics listener serves the gateway and workflow metrics of one process on metrics.path', async () => {
  const clock = new FakeScheduler(Date.parse('2026-03-01T00:00:00Z'));
  const obs = createObservability(
    { metrics: { port: 0, path: '/prom', process_metrics: false }, notifications: { credential_rotation: { enabled: false } } },
    { scheduler: clock, logDestination: silent(), knownProviders: ['openai'] },
  );
  const relay = new EventEmitter();
  const workflow = new EventEmitter();
  const detachGateway = obs.observeGateway({ relay });
  const detachWorkflow = obs.observeWorkflow(workflow);
  await obs.start();
  try {
    relay.emit('request:end', requestEnd());
    workflow.emit('workflow:gate_failed', {
      featureSlug: 'f',
      wpSequence: null,
      transition: 'review->done',
      ruleIds: ['tests-pass'],
      at: clock.now(),
    });
    const { port } = obs.metricsServer!.address()!;
    const body = await (await fetch(`http://127.0.0.1:${port}/prom`)).text();
    assert.match(body, /svc_requests_total\{provider="openai",model="gpt-4o",status="success"\} 1/);
    assert.match(body, /svc_workflow_gate_failures_total\{transition="review->done"\} 1/);
    assert.match(body, /svc_alerts\{rule="provider_down",severity="critical",state="firing"\} 0/);
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404);
    // The alert loop runs on the injected scheduler.
    await clock.advance(15_000);
    assert.equal(obs.alertsReport().evaluated_at, new Date(clock.now()).toISOString());
  } finally {
    detachGateway();
    detachWorkflow();
    await obs.stop();
  }
  assert.equal(relay.eventNames().length + workflow.eventNames().length, 0);
});
