import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { NodeFailover, type ProviderConfig, Relay, UndiciTransport } from '@switchyard/relay';
import { FakeScheduler } from '@switchyard/runtime';
import { eventually } from '@switchyard/test-support';
import { createDataPlane } from './dataPlane.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Node {
  url: string;
  relay: Relay;
  failover: NodeFailover;
  server: Server;
  stop(): Promise<void>;
}

/** Reserves a loopback port so a node's URL is known before it starts (its peers need it). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function node(
  port: number,
  name: string,
  settings: ConstructorParameters<typeof NodeFailover>[0],
  scheduler = new FakeScheduler(0),
  providers: ProviderConfig[] = [{ name: `${name}-mock`, kind: 'mock', models: ['demo'] }],
): Promise<Node> {
  const failover = new NodeFailover(settings, { scheduler });
  const transport = new UndiciTransport();
  const relay = new Relay({ providers, transport, failover });
  const dataPlane = createDataPlane({ relay, apiKeys: ['sk-cluster'] });
  const server = createServer(async (req, res) => {
    if (req.url === '/health') {
      res.writeHead(200).end('ok');
      return;
    }
    if (!(await dataPlane.handle(req, res))) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  cleanups.push(async () => {
    await stop();
    await failover.close();
    await transport.close();
  });
  return { url: `http://127.0.0.1:${port}`, relay, failover, server, stop };
}

async function ask(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-cluster', 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, provider: response.headers.get('x-switchyard-provider'), body: await response.text() };
}

describe('node failover', () => {
  test('active_passive: when every local provider is down, the backup gateway answers', async () => {
    const backup = await node(await freePort(), 'backup', { mode: 'none' });
    const primary = await node(await freePort(), 'primary', { mode: 'active_passive', backupUrl: (await Promise.resolve(backup)).url });
    assert.equal((await ask(primary.url)).provider, 'primary-mock');
    primary.relay.table.markUnavailable('primary-mock', 'cooldown', Date.now() + 60_000);
    const failedOver = await ask(primary.url);
    assert.equal(failedOver.status, 200);
    assert.equal(failedOver.provider, 'backup-mock');
    await backup.stop();
    const nobody = await ask(primary.url);
    assert.equal(nobody.status, 429, 'with the backup gone too, the client hears why');
  });

  test('active_passive: a request whose every attempt fails before the first byte goes to the backup', async () => {
    const backup = await node(await freePort(), 'backup2', { mode: 'none' });
    // An upstream nobody listens on: each attempt fails with a refused connection, before any cooldown or check.
    const deadUpstream = `http://127.0.0.1:${await freePort()}/v1`;
    const primary = await node(await freePort(), 'primary2', { mode: 'active_passive', backupUrl: backup.url }, new FakeScheduler(0), [
      { name: 'dead', kind: 'openai-compatible', baseUrl: deadUpstream, models: ['demo'] },
    ]);
    const answer = await ask(primary.url);
    assert.equal(answer.status, 200);
    assert.equal(answer.provider, 'backup2-mock');
    await backup.stop();
    assert.equal((await ask(primary.url)).status, 502, 'with the backup gone too, the upstream failure is reported');
  });

  test('active_active: each request is served by its owner on the ring, whichever node it reached', async () => {
    const ports = [await freePort(), await freePort(), await freePort()];
    const urls = ports.map((p) => `http://127.0.0.1:${p}`);
    const nodes = await Promise.all(
      ports.map((port, i) => node(port, `n${i}`, { mode: 'active_active', selfUrl: urls[i]!, peers: urls.filter((_, j) => j !== i) })),
    );
    for (let k = 0; k < 30; k++) {
      const key = `session-${k}`;
      const answers = await Promise.all(nodes.map((n) => ask(n.url, { 'x-switchyard-affinity': key })));
      const served = new Set(answers.map((a) => a.provider));
      assert.equal(served.size, 1, `${key} was served by ${[...served].join(', ')}`);
      assert.ok(answers.every((a) => a.status === 200));
    }
  });

  test('active_active: a dead peer leaves the ring, no request fails, and it rejoins when it answers again', async () => {
    const scheduler = new FakeScheduler(0);
    const ports = [await freePort(), await freePort()];
    const urls = ports.map((p) => `http://127.0.0.1:${p}`);
    const a = await node(
      ports[0]!,
      'a',
      { mode: 'active_active', selfUrl: urls[0]!, peers: [urls[1]!], healthCheckIntervalMs: 10_000 },
      scheduler,
    );
    let b = await node(ports[1]!, 'b', { mode: 'active_active', selfUrl: urls[1]!, peers: [urls[0]!] });
    a.failover.start();
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    const ownedByB = keys.filter((key) => a.failover.ownerElsewhere(key, false) === urls[1]);
    assert.ok(ownedByB.length > 5, 'some keys belong to b');
    await b.stop();
    for (const key of keys)
      assert.equal((await ask(a.url, { 'x-switchyard-affinity': key })).status, 200, `${key} failed while b was down`);
    assert.deepEqual(a.failover.deadPeers(), [urls[1]]);
    assert.equal(a.failover.ownerElsewhere(ownedByB[0]!, false), undefined, 'a serves b’s keys meanwhile');
    b = await node(ports[1]!, 'b', { mode: 'active_active', selfUrl: urls[1]!, peers: [urls[0]!] });
    await scheduler.advance(10_000);
    // The check the timer started is real HTTP: give it real time to land.
    await eventually('the check to put b back on the ring', () => a.failover.deadPeers().length === 0);
    assert.equal((await ask(a.url, { 'x-switchyard-affinity': ownedByB[0]! })).provider, 'b-mock');
  });

  test('a forwarded request is never forwarded again', async () => {
    const ports = [await freePort(), await freePort()];
    const urls = ports.map((p) => `http://127.0.0.1:${p}`);
    const a = await node(ports[0]!, 'loop-a', { mode: 'active_active', selfUrl: urls[0]!, peers: [urls[1]!] });
    await node(ports[1]!, 'loop-b', { mode: 'active_active', selfUrl: urls[1]!, peers: [urls[0]!] });
    const key = Array.from({ length: 50 }, (_, i) => `x${i}`).find((k) => a.failover.ownerElsewhere(k, false) === urls[1])!;
    const direct = await ask(a.url, { 'x-switchyard-affinity': key, 'x-switchyard-forwarded': 'someone' });
    assert.equal(direct.provider, 'loop-a-mock');
  });
});
