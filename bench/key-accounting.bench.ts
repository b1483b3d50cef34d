/**
 * Key-accounting benchmark: what 10,000 runtime client keys add per request outside HTTP and the relay,
 * where the whole-gateway benchmark (`pnpm bench client-keys`) cannot resolve a few microseconds on a loaded
 * machine. Each side runs in its own process, through the real stores in a temp dir:
 *
 * - keys: the guard (identify, admit, settle; every limit on, a daily token budget) over 10,000 keys in
 *   `FileClientKeyStore`, and the usage recorder over `SqliteUsageStore`, the load rotating through all keys;
 * - static: ten config keys through `ApiKeySet.identify`, and the same recorder and SQLite store.
 *
 * Both flush (the guard's last-used times and budget file, the recorder's rollups) every FLUSH_EVERY requests,
 * which is about what the whole-gateway benchmark serves per 10 s flush interval: with 10,000 keys each flush
 * then writes about one rollup row, one last-used time and one budget entry per key. CPU per request is the
 * process's user + system time over REQUESTS requests after every key was used twice. The two alternate for
 * ROUNDS rounds; the table has the medians.
 *
 *   pnpm bench key-accounting [--smoke]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestEndEvent } from '@switchyard/core-routing';
import { ApiKeySet } from '@switchyard/http-kit';
import { UsageRecorder } from '@switchyard/observability';
import { CLIENT_KEYS_FILE, ClientKeyGuard, FileClientKeyStore, type KeyAdmission } from '@switchyard/server-http';
import { SqliteUsageStore } from '../packages/server-http/src/gateway/usage/sqliteUsageStore.js';
import { authDirWithKeys } from './clientKeys/keys.js';
import { median, type Row, report, SMOKE } from './lib.js';

const KEYS = SMOKE ? 1_000 : 10_000;
const FLUSH_EVERY = SMOKE ? 1_500 : 20_000;
const REQUESTS = SMOKE ? 6_000 : 120_000;
const ROUNDS = SMOKE ? 1 : 3;
const side = process.argv.find((arg) => arg === '--side=keys' || arg === '--side=static')?.slice('--side='.length);

/** One side in this process: prints `US <µs per request>`. */
async function measure(which: 'keys' | 'static'): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-key-accounting-'));
  let keyDir: string | undefined;
  try {
    const recorder = new UsageRecorder({ store: SqliteUsageStore.open(join(dir, 'usage.sqlite')), flushIntervalMs: 1e9 });
    const ended = (client: { keyId: string; name: string; tenant: string }) =>
      ({
        type: 'request:end',
        requestId: 'r',
        at: Date.now(),
        client,
        provider: 'mock',
        model: 'bench-model',
        outcome: 'ok',
        cached: false,
        tokens: { input: 12, output: 30 },
      }) as unknown as RequestEndEvent;
    let step: (i: number) => void;
    let flush: () => Promise<void>;
    if (which === 'keys') {
      const keys = authDirWithKeys(KEYS);
      keyDir = keys.dir;
      const { secrets } = keys;
      const path = join(keyDir, CLIENT_KEYS_FILE);
      const store = await FileClientKeyStore.open(path);
      const guard = await ClientKeyGuard.open({ store, ledger: store.ledger, clock: Date });
      step = (i) => {
        const admission = guard.admit(guard.identify(secrets[i % KEYS]!)!, 'bench-model') as KeyAdmission;
        const end = ended(admission.client);
        guard.settle(admission, end);
        recorder.record(end);
      };
      flush = async () => {
        await guard.flush();
        await recorder.flush();
      };
    } else {
      const staticKeys = Array.from({ length: 10 }, (_, i) => `sk-static-bench-${i}`);
      const clients = staticKeys.map((_, i) => ({ keyId: `static:key-${i}`, name: `key-${i}`, tenant: 'default' }));
      const keys = new ApiKeySet(staticKeys);
      step = (i) => {
        if (!keys.identify(staticKeys[i % 10])) throw new Error('static key not found');
        recorder.record(ended(clients[i % 10]!));
      };
      flush = () => recorder.flush();
    }
    const run = async (count: number) => {
      for (let i = 0; i < count; i++) {
        step(i);
        if ((i + 1) % FLUSH_EVERY === 0) await flush();
      }
    };
    await run(2 * KEYS + FLUSH_EVERY);
    const before = process.cpuUsage();
    await run(REQUESTS);
    const used = process.cpuUsage(before);
    await recorder.close();
    process.stdout.write(`US ${(used.user + used.system) / REQUESTS}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  }
}

if (side === 'keys' || side === 'static') {
  await measure(side);
} else {
  const script = fileURLToPath(import.meta.url);
  const perRequest = { keys: [] as number[], static: [] as number[] };
  const added: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const got = { keys: 0, static: 0 };
    for (const which of round % 2 === 0 ? (['static', 'keys'] as const) : (['keys', 'static'] as const)) {
      const child = spawnSync(process.execPath, [script, `--side=${which}`, ...(SMOKE ? ['--smoke'] : [])], { encoding: 'utf8' });
      const match = /US ([\d.]+)/.exec(child.stdout ?? '');
      if (child.status !== 0 || !match) throw new Error(`the ${which} side failed: ${child.stderr}`);
      got[which] = Number(match[1]);
      perRequest[which].push(got[which]);
    }
    added.push(got.keys - got.static);
    console.log(`round ${round + 1}: static ${got.static.toFixed(2)} µs, keys ${got.keys.toFixed(2)} µs per request`);
  }
  const rows: Row[] = [
    { name: 'static api-keys: identify + usage recorder, SQLite flushes', value: median(perRequest.static), unit: 'µs' },
    {
      name: `${KEYS.toLocaleString('en-US')} client keys: identify + admit + settle + usage recorder, every flush`,
      value: median(perRequest.keys),
      unit: 'µs',
      baseline: median(perRequest.static),
    },
    { name: 'added per request (median of per-round differences)', value: median(added), unit: 'µs' },
  ];
  report(
    `Key accounting: ${KEYS.toLocaleString('en-US')} runtime keys against static api-keys, in process (median of ${ROUNDS} rounds)`,
    rows,
  );
}
