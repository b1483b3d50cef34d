/**
 * The gateway's usage wiring on a fake clock: retention deletes rollups older
 * than `usage.retention` at start and every hour (a reload's retention
 * applies at the next pass), and the recorder writes once per
 * `usage.flush_interval`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryUsageStore, type UsageRollup } from '@switchyard/observability';
import { sampleRollup } from '@switchyard/observability/contract';
import { FakeScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import { parseConfig } from '../config/load.js';
import type { GatewayConfig } from '../config/schema.js';
import { GatewayUsage, RETENTION_CHECK_INTERVAL_MS } from './gatewayUsage.js';

const DAY = 86_400_000;
const T0 = Date.parse('2026-06-01T00:00:00Z');

class CountingStore extends MemoryUsageStore {
  writes = 0;
  override async add(rollups: readonly UsageRollup[]): Promise<void> {
    this.writes++;
    await super.add(rollups);
  }
}

async function minutes(store: MemoryUsageStore): Promise<number[]> {
  return (await store.series({ from: 0, to: T0 + 365 * DAY, groupBy: 'key', stepMs: 60_000 })).map((b) => (b.start - T0) / DAY);
}

function wired(yaml: string) {
  const clock = new FakeScheduler(T0);
  const store = new CountingStore();
  let config: GatewayConfig = parseConfig(yaml);
  const warnings: string[] = [];
  const usage = new GatewayUsage({
    store,
    scheduler: clock,
    config: () => config,
    registry: undefined,
    logger: { warn: (_o, message) => warnings.push(message) },
  });
  return { clock, store, usage, warnings, setConfig: (next: string) => (config = parseConfig(next)) };
}

test('retention: rows older than usage.retention go at start and at every hourly pass; a reload applies at the next one', async () => {
  const { clock, store, usage, setConfig } = wired('usage: { retention: 30d }');
  await store.add([
    sampleRollup({ minute: T0 - 40 * DAY }),
    sampleRollup({ minute: T0 - 20 * DAY }),
    sampleRollup({ minute: T0 - 60_000 }),
  ]);
  usage.start(new EventEmitter());
  await clock.advance(0);
  assert.deepEqual(await minutes(store), [-20, -60_000 / DAY], 'the 40-day-old row went at start');
  setConfig('usage: { retention: 10d }');
  await clock.advance(RETENTION_CHECK_INTERVAL_MS - 1);
  assert.equal((await minutes(store)).length, 2, 'not before the hour');
  await clock.advance(1);
  assert.deepEqual(await minutes(store), [-60_000 / DAY]);
  await usage.close();
  assert.equal(clock.pending, 0, 'close stops the retention timer');
});

test('the default retention is 90 days, and the recorder writes once per flush_interval', async () => {
  const { clock, store, usage } = wired('usage: { flush_interval: 5s }');
  assert.equal(parseConfig('').usage.retention, 90 * DAY);
  const relay = new EventEmitter();
  usage.start(relay);
  const end = {
    requestId: 'r',
    model: 'm',
    client: { keyId: 'static:a', name: 'a', tenant: 't' },
    provider: 'p',
    credentialId: null,
    outcome: 'success' as const,
    httpStatus: 200,
    errorType: null,
    latencyMs: 1,
    ttfbMs: 1,
    tokens: { input: 1, output: 1 },
    cached: false,
    attempts: 1,
    at: T0,
  };
  relay.emit('request:end', end);
  relay.emit('request:end', end);
  await clock.advance(4_999);
  assert.equal(store.writes, 0);
  await clock.advance(1);
  assert.equal(store.writes, 1);
  relay.emit('request:end', end);
  await usage.close();
  assert.equal(store.writes, 2, 'close writes the rest');
  const [bucket] = await store.series({ from: T0, to: T0 + 60_000, groupBy: 'tenant', stepMs: 60_000 });
  assert.equal(bucket!.requests, 3);
});

test('usage config: bad flush_interval, retention and max_key_labels are refused at load', () => {
  assert.throws(() => parseConfig('usage: { flush_interval: 10ms }'), /flush_interval/);
  assert.throws(() => parseConfig('usage: { retention: 5m }'), /retention/);
  assert.throws(() => parseConfig('usage: { metrics: { max_key_labels: -1 } }'), /max_key_labels/);
  assert.throws(() => parseConfig('usage: { colour: red }'), /colour/);
});
