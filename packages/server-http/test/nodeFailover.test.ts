/**
 * Node failover (`server.failover.*`) between real gateway processes:
 * active_passive moves traffic to the backup gateway once the primary's
 * providers fail their health checks, and back when they recover;
 * active_active survives a SIGKILLed peer under steady traffic and takes it
 * back on the ring when it is restarted.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { after, describe, type TestContext, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { freePort, type GatewayNode, startGatewayNodes } from './gatewayProcesses.js';

const CLIENT_KEY = 'sk-nodes';
const FAILOVER_TIMEOUT_MS = 1_000;

interface Answer {
  at: number;
  status: number;
  provider: string | null;
  servedBy: string | null;
  error?: string;
}

let asked = 0;

async function ask(node: Pick<GatewayNode, 'url'>, affinity?: string): Promise<Answer> {
  const at = Date.now();
  // A new question each time: the response cache would answer a repeated one without routing it.
  const content = `question ${++asked}`;
  try {
    const response = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CLIENT_KEY}`,
        'content-type': 'application/json',
        ...(affinity ? { 'x-switchyard-affinity': affinity } : {}),
      },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content }] }),
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    return {
      at,
      status: response.status,
      provider: response.headers.get('x-switchyard-provider'),
      servedBy: response.headers.get('x-switchyard-served-by'),
    };
  } catch (error) {
    return { at, status: 0, provider: null, servedBy: null, error: (error as Error).message };
  }
}

/**
 * Runs `workers` client loops until stopped, collecting every answer. They
 * stop when the test ends, however it ends: a loop left running after a
 * failed assertion would spin against closed nodes and keep the file's
 * process alive forever.
 */
function clientLoop(t: TestContext, pick: (n: number) => { node: Pick<GatewayNode, 'url'>; affinity?: string | undefined }, workers = 4) {
  const answers: Answer[] = [];
  let running = true;
  let n = 0;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const { node, affinity } = pick(n++);
      answers.push(await ask(node, affinity));
    }
  });
  const stop = async () => {
    running = false;
    await Promise.all(loops);
  };
  t.after(stop);
  return { answers, stop };
}

/**
 * An upstream the test can take down and bring back: up, it answers like a
 * minimal OpenAI-compatible server; down, it resets every connection, as a
 * dead host behind a load balancer would.
 */
async function switchableUpstream() {
  let up = true;
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (!up) {
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/v1/models')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'demo' }] }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'demo',
          choices: [{ index: 0, message: { role: 'assistant', content: 'from the primary' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${port}/v1`,
    setUp(value: boolean) {
      up = value;
      if (!up) for (const socket of sockets) socket.destroy();
    },
  };
}

describe('node failover between gateway processes', { timeout: 120_000 }, () => {
  test('active_passive: the backup takes traffic once the primary fails its checks, and gives it back on recovery', async (t) => {
    const upstream = await switchableUpstream();
    const { nodes } = await startGatewayNodes({
      count: 2,
      config: ({ index, urls }) =>
        index === 0
          ? {
              'api-keys': [CLIENT_KEY],
              providers: {
                // A short cooldown, so that the primary returns soon after it recovers.
                primary: { kind: 'openai-compatible', base_url: upstream.url, models: ['demo'], cooldown: { default_duration: '1s' } },
              },
              server: {
                // A dead upstream fails its check at once (the socket is destroyed); the timeout only has to
                // outlast a loaded machine's slow answer, which 500 ms did not (the primary never came back).
                operations: { health_check: { interval: '200ms', timeout: '5s', unhealthy_threshold: 1, healthy_threshold: 1 } },
                failover: {
                  mode: 'active_passive',
                  backup_url: urls[1],
                  health_check_interval: '200ms',
                  failover_timeout: `${FAILOVER_TIMEOUT_MS}ms`,
                },
              },
            }
          : { 'api-keys': [CLIENT_KEY], providers: { backup: { kind: 'mock', models: ['demo'] } } },
    });
    const [primary, backup] = nodes as [GatewayNode, GatewayNode];
    assert.equal((await ask(primary)).provider, 'primary');

    const loop = clientLoop(t, () => ({ node: primary }), 2);
    await eventually('traffic on the primary', async () => loop.answers.length > 10);
    const downAt = Date.now();
    upstream.setUp(false);
    await eventually('the backup to serve', async () => loop.answers.some((a) => a.at > downAt && a.provider === 'backup'));
    const failedOverAt = Date.now();
    await eventually('steady traffic on the backup', async () => loop.answers.filter((a) => a.at > failedOverAt).length > 20);
    upstream.setUp(true);
    const upAt = Date.now();
    // Health checks, then the 1 s cooldown: seconds on a loaded machine, so a generous deadline.
    await eventually('traffic back on the primary', async () => loop.answers.some((a) => a.at > upAt && a.provider === 'primary'), 30_000);
    await loop.stop();

    // Before the checks notice, a request whose attempts all fail goes to the backup too: none fails at all.
    assert.deepEqual(
      loop.answers.filter((a) => a.status !== 200),
      [],
      'no request fails',
    );
    const onBackup = loop.answers.filter((a) => a.at > downAt && a.at < upAt && a.provider === 'backup').length;
    console.log(`active_passive: ${loop.answers.length} requests, ${onBackup} served by the backup while the primary was down`);
    assert.ok(
      loop.answers.filter((a) => a.provider === 'backup').every((a) => a.servedBy === backup.url),
      'backup answers name the backup node',
    );
  });

  test('active_active: a SIGKILLed peer costs no request after failover_timeout, and rejoins the ring when restarted', async (t) => {
    const { nodes } = await startGatewayNodes({
      count: 3,
      config: ({ index, urls }) => ({
        'api-keys': [CLIENT_KEY],
        providers: { [`node${index}`]: { kind: 'mock', models: ['demo'] } },
        server: {
          failover: {
            mode: 'active_active',
            self_url: urls[index],
            peers: urls.filter((_, j) => j !== index),
            health_check_interval: '200ms',
            failover_timeout: `${FAILOVER_TIMEOUT_MS}ms`,
          },
        },
      }),
    });
    const [a, b, c] = nodes as [GatewayNode, GatewayNode, GatewayNode];
    const keys = Array.from({ length: 40 }, (_, i) => `session-${i}`);
    // Owners as the ring says, learnt through node a (the provider names which node served).
    const owners = new Map<string, string | null>();
    for (const key of keys) owners.set(key, (await ask(a, key)).provider);
    const ownedByC = keys.filter((key) => owners.get(key) === 'node2');
    assert.ok(ownedByC.length >= 3, `node c owns some keys (${ownedByC.length})`);
    for (const key of keys) assert.equal((await ask(b, key)).provider, owners.get(key), `${key} has one owner whichever node it reaches`);

    // Clients talk to the survivors; a third of the keys belong to c.
    const loop = clientLoop(t, (n) => ({ node: n % 2 === 0 ? a : b, affinity: keys[n % keys.length] }), 4);
    await eventually('traffic on all three nodes', async () => loop.answers.filter((x) => x.provider === 'node2').length > 10);
    await c.kill('SIGKILL');
    const killedAt = Date.now();
    await eventually('traffic past the failover timeout', async () =>
      loop.answers.some((x) => x.at > killedAt + FAILOVER_TIMEOUT_MS + 1_000),
    );
    const restartingAt = Date.now();
    await c.restart();
    const restartedAt = Date.now();
    await eventually('c to serve its keys again through a and b', async () => {
      const recent = loop.answers.filter((x) => x.at > restartedAt && x.provider === 'node2');
      return recent.length > 10;
    });
    await loop.stop();

    const afterTimeout = loop.answers.filter((x) => x.at > killedAt + FAILOVER_TIMEOUT_MS);
    assert.deepEqual(
      afterTimeout.filter((x) => x.status !== 200),
      [],
      'no client request fails after failover_timeout',
    );
    const whileDown = loop.answers.filter((x) => x.at > killedAt && x.at < restartingAt);
    assert.ok(whileDown.length > 0 && whileDown.every((x) => x.provider !== 'node2'), 'nothing is served by the dead node');
    // a and b each put c back on their ring at their own next peer check: the traffic above may have seen only one
    // of them do it (the loop sends some keys through a only, the others through b only).
    await eventually('a and b to put c back on their rings', async () => {
      for (const node of [a, b]) if ((await ask(node, ownedByC[0])).provider !== 'node2') return false;
      return true;
    });
    for (const key of ownedByC) {
      assert.equal((await ask(a, key)).provider, 'node2', `${key} is back on c (via a)`);
      assert.equal((await ask(b, key)).provider, 'node2', `${key} is back on c (via b)`);
    }
    const total = loop.answers.length;
    const failures = loop.answers.filter((x) => x.status !== 200).length;
    console.log(
      `active_active: ${total} requests, ${failures} failed (all before failover_timeout), ${whileDown.length} while c was down, c restarted in ${restartedAt - restartingAt} ms`,
    );
  });
});
