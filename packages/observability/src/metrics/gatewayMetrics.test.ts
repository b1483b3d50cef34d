import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { requirePromtool } from '@switchyard/test-support';
import { EventEmitter } from 'eventemitter3';
import { observeGateway } from '../observe.js';
import { attemptEnd, requestEnd, requestStart } from '../testing/fixtures.js';
import { GatewayMetrics } from './gatewayMetrics.js';
import { LabelLimiter } from './labelLimiter.js';
import { WorkflowMetrics } from './workflowMetrics.js';

const promtool = requirePromtool();

async function value(metrics: { registry: { getSingleMetricAsString(name: string): Promise<string> } }, name: string, labels: string) {
  const family = name.replace(/_(bucket|sum|count)$/, '');
  const text = await metrics.registry.getSingleMetricAsString(
    family.startsWith('svc_request_duration') || family.startsWith('svc_time_to') ? family : name,
  );
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`) || (labels === '' && l.startsWith(`${name} `)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function wired() {
  const clock = new FakeScheduler(Date.parse('2026-03-01T00:00:00Z'));
  const metrics = new GatewayMetrics({ clock, knownProviders: ['openai', 'anthropic'], knownModels: ['gpt-4o'], maxLabelValues: 3 });
  const relay = new EventEmitter();
  const cooldowns = new EventEmitter();
  const health = new EventEmitter();
  const credentials = [new EventEmitter(), new EventEmitter()];
  const detach = observeGateway({ relay, cooldowns, health, credentials }, { metrics });
  return { clock, metrics, relay, cooldowns, health, credentials, detach };
}

test('requests, errors, tokens, latency, ttfb, cache hits and in-flight follow the relay events', async () => {
  const { metrics, relay } = wired();
  relay.emit('request:start', requestStart({ requestId: 'a' }));
  relay.emit('request:start', requestStart({ requestId: 'b' }));
  relay.emit('request:start', requestStart({ requestId: 'c' }));
  assert.equal(await value(metrics, 'svc_requests_in_flight', ''), 3);
  relay.emit('request:end', requestEnd({ requestId: 'a', tokens: { input: 100, output: 50 }, latencyMs: 1200, ttfbMs: 300 }));
  relay.emit('request:end', requestEnd({ requestId: 'b', cached: true, tokens: { input: 0, output: 0 }, latencyMs: 3 }));
  relay.emit(
    'request:end',
    requestEnd({
      requestId: 'c',
      provider: null,
      outcome: 'error',
      httpStatus: 503,
      errorType: 'all_providers_in_cooldown',
      tokens: { input: 0, output: 0 },
    }),
  );
  relay.emit('attempt:end', attemptEnd({ outcome: 'error', httpStatus: 500, errorType: 'upstream_error' }));
  relay.emit('attempt:end', attemptEnd());
  assert.equal(await value(metrics, 'svc_requests_in_flight', ''), 0);
  assert.equal(await value(metrics, 'svc_requests_total', 'provider="openai",model="gpt-4o",status="success"'), 2);
  assert.equal(await value(metrics, 'svc_requests_total', 'provider="none",model="gpt-4o",status="error"'), 1);
  assert.equal(await value(metrics, 'svc_errors_total', 'provider="none",error_type="all_providers_in_cooldown"'), 1);
  assert.equal(await value(metrics, 'svc_tokens_total', 'provider="openai",model="gpt-4o",type="input"'), 100);
  assert.equal(await value(metrics, 'svc_tokens_total', 'provider="openai",model="gpt-4o",type="output"'), 50);
  assert.equal(await value(metrics, 'svc_cache_hits_total', 'provider="openai",model="gpt-4o"'), 1);
  assert.equal(await value(metrics, 'svc_request_duration_seconds_bucket', 'le="2.5",provider="openai"'), 2);
  assert.equal(await value(metrics, 'svc_request_duration_seconds_bucket', 'le="1",provider="openai"'), 1);
  assert.ok(Math.abs((await value(metrics, 'svc_request_duration_seconds_sum', 'provider="openai"'))! - 1.203) < 1e-9);
  assert.ok(Math.abs((await value(metrics, 'svc_time_to_first_byte_seconds_sum', 'provider="openai"'))! - 0.45) < 1e-9);
  assert.equal(await value(metrics, 'svc_upstream_attempts_total', 'provider="openai",outcome="error"'), 1);
  assert.equal(await value(metrics, 'svc_upstream_attempts_total', 'provider="openai",outcome="success"'), 1);
});

test("svc_cost_total counts tokens at their provider's price per 1,000; a provider without a price is left out, and svc_tokens_total keeps its labels", async () => {
  const prices: Record<string, { input: number; output: number }> = { openai: { input: 2.5, output: 10 } };
  const metrics = new GatewayMetrics({ knownProviders: ['openai', 'anthropic'], tokenPrice: (provider) => prices[provider] });
  metrics.onRequestEnd(requestEnd({ provider: 'openai', model: 'gpt-4o', tokens: { input: 1000, output: 500 } }));
  metrics.onRequestEnd(requestEnd({ provider: 'openai', model: 'gpt-4o', tokens: { input: 200, output: 0 } }));
  metrics.onRequestEnd(requestEnd({ provider: 'anthropic', model: 'claude', tokens: { input: 1000, output: 1000 } }));
  // 1000 x 2.5/1000 + 500 x 10/1000 = 7.5; then 200 x 2.5/1000 = 0.5.
  assert.equal(await value(metrics, 'svc_cost_total', 'provider="openai",model="gpt-4o"'), 8);
  assert.equal(await value(metrics, 'svc_cost_total', 'provider="anthropic",model="claude"'), undefined);
  // A price changed by a reload applies to the next request.
  prices.anthropic = { input: 1, output: 1 };
  metrics.onRequestEnd(requestEnd({ provider: 'anthropic', model: 'claude', tokens: { input: 1000, output: 1000 } }));
  assert.equal(await value(metrics, 'svc_cost_total', 'provider="anthropic",model="claude"'), 2);
  assert.equal(await value(metrics, 'svc_tokens_total', 'provider="openai",model="gpt-4o",type="input"'), 1200);
});

test('a request the client closed counts as client_closed, not as an error, and no error type is counted', async () => {
  const { metrics, relay } = wired();
  const closed = { outcome: 'client_closed', errorType: 'client_closed' } as const;
  relay.emit('attempt:end', attemptEnd({ ...closed, httpStatus: null }));
  relay.emit('request:end', requestEnd({ ...closed, httpStatus: 499, ttfbMs: null, tokens: { input: 0, output: 0 } }));
  assert.equal(await value(metrics, 'svc_requests_total', 'provider="openai",model="gpt-4o",status="client_closed"'), 1);
  assert.equal(await value(metrics, 'svc_requests_total', 'provider="openai",model="gpt-4o",status="error"'), undefined);
  assert.equal(await value(metrics, 'svc_upstream_attempts_total', 'provider="openai",outcome="client_closed"'), 1);
  assert.equal(await value(metrics, 'svc_upstream_attempts_total', 'provider="openai",outcome="error"'), undefined);
  assert.doesNotMatch(await metrics.registry.getSingleMetricAsString('svc_errors_total'), /client_closed|provider="openai"/);
});

test('svc_provider_health has a series for a provider that has been healthy since start (no change event)', async () => {
  const { metrics, clock, health } = wired();
  assert.equal(await value(metrics, 'svc_provider_health', 'provider="anthropic"'), undefined, 'nothing before any check');
  health.emit('health:check', { provider: 'anthropic', ok: true, latencyMs: 12, at: clock.now() });
  assert.equal(await value(metrics, 'svc_provider_health', 'provider="anthropic"'), 1);
  // The first check fails and the monitor judges the provider unhealthy: the change wins, whichever comes first.
  health.emit('health:check', { provider: 'openai', ok: false, latencyMs: 12, error: 'ECONNREFUSED', at: clock.now() });
  health.emit('health:change', { provider: 'openai', status: 'unhealthy', previous: 'healthy', at: clock.now() });
  health.emit('health:check', { provider: 'openai', ok: false, latencyMs: 12, error: 'ECONNREFUSED', at: clock.now() });
  assert.equal(await value(metrics, 'svc_provider_health', 'provider="openai"'), 0);
});

test('health, cooldown (with remaining seconds at scrape time), quota and rotations', async () => {
  const { metrics, clock, cooldowns, health, credentials } = wired();
  health.emit('health:change', { provider: 'openai', status: 'unhealthy', previous: 'healthy', at: clock.now() });
  health.emit('health:change', { provider: 'anthropic', status: 'healthy', previous: 'unhealthy', at: clock.now() });
  health.emit('health:check', { provider: 'openai', ok: false, latencyMs: 30, error: 'ECONNREFUSED', at: clock.now() });
  assert.equal(await value(metrics, 'svc_provider_health', 'provider="openai"'), 0);
  assert.equal(await value(metrics, 'svc_provider_health', 'provider="anthropic"'), 1);
  assert.equal(await value(metrics, 'svc_health_checks_total', 'provider="openai",outcome="failed"'), 1);
  // A failed check that crosses no threshold leaves the judged status alone.
  assert.equal(await value(metrics, 'svc_provider_health', 'provider="openai"'), 0);

  cooldowns.emit('cooldown:start', { key: 'openai', reason: 'rate_limit', startedAt: clock.now(), endsAt: clock.now() + 60_000 });
  assert.equal(await value(metrics, 'svc_cooldown_active', 'key="openai"'), 1);
  assert.equal(await value(metrics, 'svc_cooldown_remaining_seconds', 'key="openai"'), 60);
  await clock.advance(45_000);
  assert.equal(await value(metrics, 'svc_cooldown_remaining_seconds', 'key="openai"'), 15);
  cooldowns.emit('cooldown:end', { key: 'openai', reason: 'rate_limit', endedBy: 'expiry', at: clock.now() });
  assert.equal(await value(metrics, 'svc_cooldown_active', 'key="openai"'), 0);
  assert.equal(await value(metrics, 'svc_cooldown_remaining_seconds', 'key="openai"'), undefined);
  assert.equal(await value(metrics, 'svc_cooldowns_total', 'key="openai",reason="rate_limit"'), 1);

  credentials[0]!.emit('quota:update', { provider: 'openai', credentialId: 'k1', limit: 1000, used: 250, remaining: 750 });
  credentials[1]!.emit('quota:update', { provider: 'anthropic', credentialId: 'k2', limit: null, used: 10, remaining: null });
  credentials[1]!.emit('credential:rotated', { provider: 'anthropic', from: 'k2', to: 'k3', reason: 'exhausted' });
  assert.equal(await value(metrics, 'svc_credential_quota_remaining', 'provider="openai",credential="k1"'), 750);
  assert.equal(await value(metrics, 'svc_credential_quota_limit', 'provider="openai",credential="k1"'), 1000);
  assert.equal(await value(metrics, 'svc_credential_quota_used', 'provider="anthropic",credential="k2"'), 10);
  assert.equal(
    await value(metrics, 'svc_credential_quota_remaining', 'provider="anthropic",credential="k2"'),
    undefined,
    'unlimited: no series',
  );
  assert.equal(await value(metrics, 'svc_credential_rotations_total', 'provider="anthropic",reason="exhausted"'), 1);
});

test('label cardinality stays bounded: unknown models fold into other past the limit', async () => {
  const { metrics, relay } = wired();
  for (let i = 0; i < 500; i++) relay.emit('request:end', requestEnd({ model: `client-model-${i}` }));
  relay.emit('request:end', requestEnd({ model: 'gpt-4o' }));
  const text = await metrics.registry.getSingleMetricAsString('svc_requests_total');
  const series = text.split('\n').filter((l) => l.startsWith('svc_requests_total{'));
  assert.equal(series.length, 5, 'three admitted + other + the declared model');
  assert.match(text, /model="other",status="success"} 497/);
  assert.match(text, /model="gpt-4o",status="success"} 1/);
  assert.equal(metrics.foldedLabels().model, 497);
});

test('LabelLimiter: declared values pass, long values fold, empty ones are unknown', () => {
  const limiter = new LabelLimiter(1, ['keep']);
  assert.equal(limiter.fold('keep'), 'keep');
  assert.equal(limiter.fold('x'.repeat(200)), 'other');
  assert.equal(limiter.fold('a'), 'a');
  assert.equal(limiter.fold('b'), 'other');
  assert.equal(limiter.fold(''), 'unknown');
  assert.equal(limiter.fold(null), 'unknown');
  assert.equal(limiter.size, 1);
});

test('detach unsubscribes every listener', () => {
  const { relay, cooldowns, health, credentials, detach } = wired();
  assert.ok(relay.listenerCount('request:end') > 0);
  detach();
  for (const emitter of [relay, cooldowns, health, ...credentials]) assert.equal(emitter.eventNames().length, 0);
});

test('promtool check metrics passes on the full registry output', { skip: promtool.skip }, async () => {
  if (!promtool.available) return;
  const { metrics, relay, cooldowns, health, credentials, clock } = wired();
  const workflow = new WorkflowMetrics({ registry: metrics.registry });
  relay.emit('request:start', requestStart());
  relay.emit('request:end', requestEnd({ model: 'weird "model"\nname\\x' }));
  relay.emit('request:end', requestEnd({ outcome: 'error', httpStatus: 429, errorType: 'rate_limit' }));
  relay.emit('attempt:end', attemptEnd());
  cooldowns.emit('cooldown:start', { key: 'openai/k1', reason: 'error', startedAt: clock.now(), endsAt: clock.now() + 5000 });
  health.emit('health:change', { provider: 'openai', status: 'healthy', previous: 'unhealthy', at: clock.now() });
  health.emit('health:check', { provider: 'openai', ok: true, latencyMs: 12, at: clock.now() });
  credentials[0]!.emit('quota:update', { provider: 'openai', credentialId: 'k1', limit: 10, used: 1, remaining: 9 });
  credentials[0]!.emit('credential:rotated', { provider: 'openai', from: null, to: 'k1', reason: 'expired' });
  workflow.onWorkflowTransition({ featureSlug: 'f', wpSequence: 1, from: 'planned', to: 'doing', actor: 'a', at: 0 });
  workflow.onWorkflowGateFailed({ featureSlug: 'f', wpSequence: null, transition: 'doing->review', ruleIds: ['tests'], at: 0 });
  workflow.onWorkflowSubcommand({ command: 'feature create', exitCode: 2, durationMs: 40, at: 0 });
  workflow.onWorkflowAgentJob({ jobId: 'j', state: 'Running', at: 0 });
  const text = await metrics.registry.metrics();
  assert.match(text, /svc_workflow_subcommands_total\{command="feature create",exit_code="2"\} 1/);
  assert.doesNotThrow(() => promtool.checkMetrics(text));
});
