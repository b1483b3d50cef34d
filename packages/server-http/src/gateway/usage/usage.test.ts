/**
 * Usage and spend as operators meet it: the official `openai` client sends
 * requests (HTTP and the `/v1/responses` websocket) through a gateway to a
 * scripted upstream, and `GET /v0/management/usage` accounts each to its
 * key, tenant, provider and model, as JSON and CSV; the per-tenant and
 * per-key metrics pass promtool; and the totals are the same after a
 * restart.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FAKE_USAGE, requirePromtool, startFakeOpenAi } from '@switchyard/test-support';
import OpenAI from 'openai';
import { startTestGateway } from '../../../test/startTestGateway.js';
import { open } from '../../../test/wsClient.js';
import type { Gateway } from '../gateway.js';
import { USAGE_FILE } from './gatewayUsage.js';

const promtool = requirePromtool();
const MANAGEMENT_KEY = 'usage-test-management-key-0123456789';
const upstream = await startFakeOpenAi({
  // A prompt saying "fail" gets a 500: an error accounted to its key.
  behaviour: (request) => (JSON.stringify(request.body ?? {}).includes('fail') ? { type: 'status', status: 500 } : { type: 'ok' }),
});
const dir = await mkdtemp(join(tmpdir(), 'usage-e2e-'));
after(async () => {
  await upstream.close();
  await rm(dir, { recursive: true, force: true });
});

const configText = `
port: 0
auth-dir: ${join(dir, 'auths')}
api-keys:
  - { key: sk-alice, name: alice, tenant: team-a }
  - { key: sk-bob, name: bob, tenant: team-b }
  - { key: sk-carol, name: carol }
remote-management:
  secret-key: ${MANAGEMENT_KEY}
providers:
  up:
    kind: openai-compatible
    base_url: ${upstream.url}
    models: [gpt-4o, gpt-4o-mini]
    cost_per_1k_tokens: { input: 1, output: 2 }
    health_check: { enabled: false }
  resp:
    kind: openai-responses
    base_url: ${upstream.url}
    models: [resp-model]
    health_check: { enabled: false }
server:
  operations:
    retry: { max_attempts: 1 }
usage:
  # Longer than any test: only the report's own flush (and close) write, so what is read is what they wrote.
  flush_interval: 1h
  metrics: { max_key_labels: 2 }
metrics: { port: 0 }
`;

async function start(): Promise<Gateway> {
  const { gateway } = await startTestGateway(configText);
  // The Responses provider needs a credential; the file store keeps it across the restarts below.
  if (!gateway.credentials.manager.list('resp').some((c) => c.id === 'resp-key')) {
    await gateway.credentials.manager.add({ id: 'resp-key', provider: 'resp', type: 'api_key', token: 'sk-upstream' });
  }
  return gateway;
}

const client = (gateway: Gateway, key: string) => new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });

async function usage(gateway: Gateway, query: string, headers: Record<string, string> = {}) {
  return fetch(`${gateway.url}/v0/management/usage?${query}`, { headers: { authorization: `Bearer ${MANAGEMENT_KEY}`, ...headers } });
}

interface Report {
  group_by: string;
  total: { requests: number };
  groups: { group: string; label: string; requests: number; errors: number; input_tokens: number; output_tokens: number; cost: number }[];
  series: { start: string; group: string; requests: number }[];
}

async function report(gateway: Gateway, query: string): Promise<Report> {
  const response = await usage(gateway, query);
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as Report;
}

const byGroup = (r: Report) => Object.fromEntries(r.groups.map((g) => [g.group, g.requests]));

describe('usage through the gateway', async () => {
  const gateway = await start();
  const alice = client(gateway, 'sk-alice');
  const bob = client(gateway, 'sk-bob');
  const carol = client(gateway, 'sk-carol');

  test('every request is accounted to its key, tenant, provider and model, with tokens, cost and errors', async () => {
    await alice.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] });
    await alice.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'again' }] });
    const stream = await alice.chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'a stream' }],
    });
    for await (const _chunk of stream) {
      // read to the end
    }
    await bob.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    await assert.rejects(bob.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'fail' }] }));
    await carol.responses.create({ model: 'resp-model', input: 'over responses' });

    const keys = await report(gateway, 'group_by=key');
    const aliceRow = keys.groups.find((g) => g.group === 'static:alice')!;
    assert.deepEqual(
      { ...aliceRow },
      {
        group: 'static:alice',
        label: 'alice',
        requests: 3,
        errors: 0,
        cache_hits: 0,
        input_tokens: 3 * FAKE_USAGE.input,
        output_tokens: 3 * FAKE_USAGE.output,
        // 33 × 1/1000 + 21 × 2/1000, at the provider's cost_per_1k_tokens.
        cost: (3 * FAKE_USAGE.input * 1 + 3 * FAKE_USAGE.output * 2) / 1000,
      },
    );
    const bobRow = keys.groups.find((g) => g.group === 'static:bob')!;
    assert.equal(bobRow.requests, 2);
    assert.equal(bobRow.errors, 1);
    assert.equal(bobRow.input_tokens, FAKE_USAGE.input);
    assert.deepEqual(byGroup(await report(gateway, 'group_by=tenant')), { 'team-a': 3, 'team-b': 2, default: 1 });
    assert.deepEqual(byGroup(await report(gateway, 'group_by=provider')), { up: 5, resp: 1 });
    assert.deepEqual(byGroup(await report(gateway, 'group_by=model')), { 'gpt-4o': 3, 'gpt-4o-mini': 2, 'resp-model': 1 });
    // The series is per minute by default over a day; its buckets sum to the totals.
    assert.equal(
      keys.series.reduce((sum, point) => sum + point.requests, 0),
      keys.total.requests,
    );
    // Beside the credentials, owner-only.
    assert.equal((await stat(join(dir, 'auths', USAGE_FILE))).mode & 0o777, 0o600);
  });

  test('a /v1/responses websocket request is accounted to the key that opened the socket', async () => {
    const before = byGroup(await report(gateway, 'group_by=key'))['static:bob'] ?? 0;
    const socket = await open(`${gateway.url.replace('http', 'ws')}/v1/responses`, { authorization: 'Bearer sk-bob' });
    socket.send({ type: 'response.create', model: 'resp-model', input: 'over a socket' });
    await socket.next((m) => m.type === 'response.completed');
    socket.ws.close();
    const keys = await report(gateway, 'group_by=key');
    assert.equal(byGroup(keys)['static:bob'], before + 1);
  });

  test('CSV: by format=csv or Accept: text/csv, with a header row', async () => {
    for (const [query, headers] of [
      ['group_by=tenant&format=csv', {}],
      ['group_by=tenant', { accept: 'text/csv' }],
    ] as const) {
      const response = await usage(gateway, query, headers);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/csv/);
      assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename="usage-tenant-/);
      const lines = (await response.text()).trimEnd().split('\r\n');
      assert.equal(lines[0], 'start,group_by,group,label,requests,errors,cache_hits,input_tokens,output_tokens,cost');
      assert.ok(lines.some((line) => /,tenant,team-a,team-a,3,0,0,/.test(line)));
    }
  });

  test('time ranges: ISO or epoch, a step, and bad parameters answered 400 bad_request naming the field', async () => {
    const now = Date.now();
    const iso = await report(gateway, `from=${new Date(now - 3_600_000).toISOString()}&to=${new Date(now + 60_000).toISOString()}&step=1h`);
    const epoch = await report(gateway, `from=${Math.floor((now - 3_600_000) / 1000)}&to=${now + 60_000}&step=1h`);
    assert.equal(iso.total.requests, epoch.total.requests);
    assert.ok(iso.total.requests >= 7);
    assert.ok(iso.series.length <= 2 * iso.groups.length, 'one or two hour buckets');
    const future = await report(gateway, `from=${new Date(now + 3_600_000).toISOString()}&to=${new Date(now + 7_200_000).toISOString()}`);
    assert.equal(future.total.requests, 0);
    for (const [query, field] of [
      ['from=yesterday', 'from'],
      ['to=2026-13-45T99:00:00Z', 'to'],
      ['from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z', 'from'],
      ['from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
      ['step=30s', 'step'],
      ['step=often', 'step'],
      ['from=2025-01-01T00:00:00Z&to=2025-12-01T00:00:00Z&step=1m', 'step'],
      ['group_by=colour', 'group_by'],
      ['format=xml', 'format'],
    ]) {
      const response = await usage(gateway, query!);
      assert.equal(response.status, 400, query);
      const body = (await response.json()) as { error: { code: string; details: { field: string } } };
      assert.equal(body.error.code, 'bad_request', query);
      assert.equal(body.error.details.field, field, query);
    }
    assert.equal((await fetch(`${gateway.url}/v0/management/usage`)).status, 401, 'the management key is required');
  });

  test('metrics: by tenant, and by key up to usage.metrics.max_key_labels; svc_* keep their labels; promtool passes', async () => {
    const { port } = gateway.observability.metricsServer!.address()!;
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(text, /svc_tenant_requests_total\{tenant="team-a",status="success"\} 3/);
    assert.match(text, /svc_tenant_cost_total\{tenant="team-a"\} 0\.075/);
    // Two keys labelled; the third folds into `other`.
    const keys = new Set([...text.matchAll(/svc_client_key_requests_total\{key="([^"]+)"/g)].map((m) => m[1]));
    assert.deepEqual([...keys].sort(), ['other', 'static:alice', 'static:bob']);
    // The specification's metrics keep exactly their label sets.
    assert.match(text, /^svc_requests_total\{provider="up",model="gpt-4o",status="success"\} 3$/m);
    assert.match(text, /^svc_tokens_total\{provider="up",model="gpt-4o",type="input"\} 33$/m);
    if (!promtool.available) return;
    assert.doesNotThrow(() => promtool.checkMetrics(text));
  });

  test('a restart answers the same totals (a clean shutdown writes what was in memory)', async () => {
    const query = 'group_by=key&step=1h';
    const before = await report(gateway, query);
    // Counted after the report's flush and not yet written (flush_interval is an hour): close must write it.
    await alice.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'last one' }] });
    assert.equal(gateway.usage!.recorder.pendingRows, 1);
    await gateway.close();
    const restarted = await start();
    const again = await report(restarted, query);
    assert.equal(again.total.requests, before.total.requests + 1);
    assert.equal(byGroup(again)['static:alice'], byGroup(before)['static:alice']! + 1);
    const others = (r: Report) => r.groups.filter((g) => g.group !== 'static:alice');
    assert.deepEqual(others(again), others(before));
    // And once more, with nothing new: the very same answer.
    await restarted.close();
    assert.deepEqual((await report(await start(), query)).groups, again.groups);
  });
});

test('usage.enabled: false writes no database and answers the route 404', async () => {
  const off = await startTestGateway((d) =>
    `${configText.replace(join(dir, 'auths'), join(d, 'auths'))}\n`.replace('usage:\n', 'usage:\n  enabled: false\n'),
  );
  await client(off.gateway, 'sk-alice').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
  const response = await usage(off.gateway, '');
  assert.equal(response.status, 404);
  assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'not_found');
  await assert.rejects(stat(join(off.dir, 'auths', USAGE_FILE)), { code: 'ENOENT' });
});
