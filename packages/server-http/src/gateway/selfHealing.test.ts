/**
 * Self-healing as an operator sees it: each action and each check after it is
 * logged and counted, the operations API shows the last action per provider,
 * and resetting the connection pool ends the failing provider's connections
 * only.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';

/** An upstream whose health endpoint answers `healthStatus`, counting connections opened and closed. */
async function upstream(healthStatus: number) {
  const counts = { opened: 0, closed: 0 };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET') return void res.writeHead(healthStatus, { 'content-type': 'application/json' }).end('{}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        }),
      );
    });
  });
  // Idle connections stay open for the whole test unless the gateway closes them.
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    counts.opened++;
    socket.on('close', () => counts.closed++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, counts, close };
}

const good = await upstream(200);
const bad = await upstream(500);
const logLines: Record<string, unknown>[] = [];
const { gateway } = await startTestGateway(
  `
port: 0
api-keys: [sk-client]
remote-management: { secret-key: mgmt }
server:
  operations:
    health_check: { interval: 100ms, timeout: 2s, unhealthy_threshold: 1, healthy_threshold: 1 }
    # Enough attempts that healing still runs whenever the test gets to watch it (a loaded machine may start it late).
    self_healing: { check_interval: 100ms, max_attempts: 1000, backoff_duration: 100ms }
providers:
  good:
    kind: openai-compatible
    base_url: ${good.url}
    models: [good-model]
    health_check: { endpoint: /health }
  bad:
    kind: openai-compatible
    base_url: ${bad.url}
    models: [bad-model]
    health_check: { endpoint: /health }
metrics: { port: 0 }
`,
  {
    logDestination: {
      write: (text: string) => {
        for (const line of text.split('\n')) if (line.trim()) logLines.push(JSON.parse(line));
      },
    },
  },
);
after(async () => {
  await good.close();
  await bad.close();
});

const lines = (msg: string, provider: string) => logLines.filter((l) => l.msg === msg && l.provider === provider);

test('healing actions and checks are logged, counted, shown per provider, and reset only the failing provider’s pool', async () => {
  const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'good-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(answer.status, 200);
  await answer.text();
  assert.ok(good.counts.opened >= 1);
  // Attempts after the good provider's connections exist: each resets the pool of the bad one.
  const resetsBefore = lines('self_healing_action', 'bad').filter((l) => l.action === 'reset_connection_pool').length;
  await eventually('two more healing attempts on the bad provider', () => {
    const resets = lines('self_healing_action', 'bad').filter((l) => l.action === 'reset_connection_pool').length;
    return resets >= resetsBefore + 2;
  });
  assert.equal(good.counts.closed, 0, 'no connection of the healthy provider was closed');
  assert.equal(lines('self_healing_action', 'good').length, 0);
  assert.ok(lines('self_healing_check', 'bad').length >= 1, 'the check after each attempt is logged');

  const port = gateway.observability.metricsServer!.address()!.port;
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  assert.match(metrics, /^svc_self_healing_actions_total\{provider="bad",action="reset_connection_pool",result="ok"\} [1-9]/m);
  assert.match(metrics, /^svc_self_healing_checks_total\{provider="bad",outcome="(retrying|gave_up)"\} [1-9]/m);

  const status = (await (
    await fetch(`${gateway.url}/v0/operations/providers/status`, { headers: { authorization: 'Bearer mgmt' } })
  ).json()) as { providers: Record<string, { last_healing_action: { action: string; ok: boolean } | null }> };
  assert.ok(['reset_connection_pool', 'refresh_credentials'].includes(status.providers.bad!.last_healing_action!.action));
  assert.equal(status.providers.bad!.last_healing_action!.ok, true);
  assert.equal(status.providers.good!.last_healing_action, null);
});
