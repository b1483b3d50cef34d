/**
 * Hot reload under load: edits to the config file (providers, strategy)
 * take effect within a second while clients keep sending requests, and no
 * request fails across the reloads, streamed ones in flight included.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type FakeUpstream, startFakeOpenAi } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';

const KEY = 'mgmt-secret';

function configText(
  upstreams: { one: FakeUpstream; two: FakeUpstream },
  edit: { oneEnabled: boolean; withTwo: boolean; strategy: string },
) {
  return `
port: 0
api-keys: [sk-client]
remote-management: { secret-key: ${KEY} }
server:
  operations:
    load_balancing: { strategy: ${edit.strategy} }
providers:
  one:
    kind: openai-compatible
    enabled: ${edit.oneEnabled}
    base_url: ${upstreams.one.url}
    models: [reload-model]
    priority: 1
${
  edit.withTwo
    ? `  two:
    kind: openai-compatible
    base_url: ${upstreams.two.url}
    models: [reload-model]
    priority: 0
`
    : ''
}metrics: { enabled: false }
`;
}

/** Replaces the file the way editors that save atomically do. */
async function saveAtomically(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
}

/** Clients sending a mix of plain and streamed requests until stopped. */
function startLoad(url: string, concurrency: number) {
  const failures: string[] = [];
  let completed = 0;
  let running = true;
  const worker = async (index: number) => {
    for (let n = 0; running; n++) {
      const stream = (index + n) % 2 === 0;
      try {
        const response = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'reload-model', stream, messages: [{ role: 'user', content: `request ${index}-${n}` }] }),
        });
        const text = await response.text();
        if (response.status !== 200) failures.push(`${response.status} ${text.slice(0, 200)}`);
        else if (stream && !text.includes('data: [DONE]')) failures.push(`stream cut short: ${text.slice(-200)}`);
        else completed++;
      } catch (error) {
        failures.push(String(error));
      }
    }
  };
  const workers = Array.from({ length: concurrency }, (_, i) => worker(i));
  return {
    failures,
    get completed() {
      return completed;
    },
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, withinMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > withinMs) assert.fail(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Date.now() - started;
}

test('hot reload under load: providers and strategy change within 1 s and no request fails', async () => {
  // Streams take ~40 ms, so requests are in flight whenever a reload lands.
  const slowStream = () => ({ type: 'ok' as const, chunks: 4, chunkDelayMs: 10 });
  const one = await startFakeOpenAi({ models: ['reload-model'], behaviour: slowStream });
  const two = await startFakeOpenAi({ models: ['reload-model'], behaviour: slowStream });
  const dir = await mkdtemp(join(tmpdir(), 'gateway-reload-'));
  const initial = configText({ one, two }, { oneEnabled: true, withTwo: false, strategy: 'round_robin' });
  const { gateway, path } = await startTestGateway(initial);
  let load: ReturnType<typeof startLoad> | undefined;
  after(async () => {
    await load?.stop();
    await gateway.close();
    await Promise.all([one.close(), two.close()]);
    await rm(dir, { recursive: true, force: true });
  });
  const strategy = async () => {
    const response = await fetch(`${gateway.url}/v0/operations/load_balancing/status`, { headers: { authorization: `Bearer ${KEY}` } });
    return ((await response.json()) as { strategy: string }).strategy;
  };

  load = startLoad(gateway.url, 6);
  await waitFor('traffic reaches provider one', () => one.chatCount >= 20, 10_000);

  // 1. A second provider joins, and the strategy changes to priority, which prefers it (priority 0).
  await writeFile(path, configText({ one, two }, { oneEnabled: true, withTwo: true, strategy: 'priority' }));
  const joined = await waitFor('provider two serves', () => two.chatCount > 0, 1000);
  await waitFor('strategy reads priority', async () => (await strategy()) === 'priority', 1000);
  const oneAfterSwitch = one.chatCount;
  await waitFor('priority keeps traffic on two', () => two.chatCount >= 30, 10_000);
  // Under priority, one only takes what was already in flight when the strategy changed.
  assert.ok(one.chatCount - oneAfterSwitch <= 6, `one took ${one.chatCount - oneAfterSwitch} requests after the switch`);

  // 2. Provider one is disabled and the strategy goes back to round_robin, saved atomically.
  await saveAtomically(path, configText({ one, two }, { oneEnabled: false, withTwo: true, strategy: 'round_robin' }));
  await waitFor('strategy reads round_robin', async () => (await strategy()) === 'round_robin', 1000);
  const oneAtDisable = one.chatCount;
  const twoAtDisable = two.chatCount;
  await waitFor('traffic continues on two', () => two.chatCount >= twoAtDisable + 30, 10_000);
  assert.ok(one.chatCount - oneAtDisable <= 6, 'a disabled provider gets no new traffic');

  // 3. Provider one comes back and two leaves.
  await writeFile(path, configText({ one, two }, { oneEnabled: true, withTwo: false, strategy: 'round_robin' }));
  const oneBack = one.chatCount;
  const returned = await waitFor('provider one serves again', () => one.chatCount > oneBack, 1000);
  const twoAtRemoval = two.chatCount;
  await waitFor('traffic continues on one', () => one.chatCount >= oneBack + 30, 10_000);
  assert.ok(two.chatCount - twoAtRemoval <= 6, 'a removed provider gets no new traffic');

  await load.stop();
  assert.deepEqual(load.failures, [], 'no request failed across three reloads');
  assert.ok(load.completed > 100, `requests completed: ${load.completed}`);
  console.log(`# reloads applied in ${joined} ms and ${returned} ms under load; ${load.completed} requests, 0 failed`);
});
