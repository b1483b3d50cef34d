import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { eventually, FAKE_USAGE, type FakeOpenAi, startFakeOpenAi } from '@switchyard/test-support';
import { startTestGateway } from '../../test/startTestGateway.js';
import type { Gateway } from './gateway.js';

const dir = await mkdtemp(join(tmpdir(), 'quota-batching-'));
const gateways: Gateway[] = [];
const fakes: FakeOpenAi[] = [];
after(async () => {
  for (const gateway of gateways) await gateway.close();
  for (const fake of fakes) await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const TOKENS = FAKE_USAGE.input + FAKE_USAGE.output;

/** A gateway on its own auth-dir with one credential that has a quota, and the usage its `.quota.json` holds. */
async function start(name: string, batching: string) {
  const fake = await startFakeOpenAi();
  fakes.push(fake);
  const authDir = join(dir, `${name}-auths`);
  const yaml = `
port: 0
auth-dir: ${authDir}
server: { operations: { cache: { enabled: false }, batch_processing: ${batching} } }
providers:
  keyed:
    kind: openai-compatible
    base_url: ${fake.url}
    models: [gpt-4o]
    health_check: { enabled: false }
metrics: { enabled: false }
`;
  const { gateway } = await startTestGateway(yaml);
  gateways.push(gateway);
  await gateway.credentials.manager.add({ id: 'q', provider: 'keyed', type: 'api_key', token: 'tok-q', quota: { limit: 1_000_000 } });
  const chat = async () => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
  };
  const stored = async (): Promise<number> => {
    const text = await readFile(join(authDir, '.quota.json'), 'utf8').catch(() => undefined);
    return text === undefined ? 0 : ((JSON.parse(text) as { usage: Record<string, { used: number }> }).usage.q?.used ?? 0);
  };
  return { chat, stored };
}

test('batch_processing: quota usage is written once max_batch_size requests are waiting, before the timeout', async () => {
  const { chat, stored } = await start('batched', '{ max_batch_size: 3, timeout: 1h }');
  await chat();
  await chat();
  // Two requests wait for a third or for the hour: not for the quota tracker's own default interval (1 s).
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(await stored(), 0, 'two of three: nothing written yet');
  await chat();
  await eventually('the full batch is written', async () => (await stored()) === 3 * TOKENS, 5000);
});

test('batch_processing: the timeout writes a batch that never fills', async () => {
  const { chat, stored } = await start('timeout', '{ max_batch_size: 100, timeout: 200ms }');
  await chat();
  await eventually('the lone request is written after the timeout', async () => (await stored()) === TOKENS, 5000);
});

test('batch_processing off: every request is written on its own', async () => {
  const { chat, stored } = await start('off', '{ enabled: false, max_batch_size: 100, timeout: 1h }');
  await chat();
  await eventually('the first request is written', async () => (await stored()) === TOKENS, 5000);
  await chat();
  await eventually('and the second', async () => (await stored()) === 2 * TOKENS, 5000);
});
