import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AuditLog, JsonlAuditStore, MemoryAuditStore, repairJsonlFile, verifyFile } from '../src/index.js';
import { runCli, spawnTs } from './support.js';

const dir = await mkdtemp(join(tmpdir(), 'audit-crash-'));
after(() => rm(dir, { recursive: true, force: true }));
const APPENDER = fileURLToPath(new URL('./fixtures/appender.ts', import.meta.url));

/** Runs the appender and SIGKILLs it once it has acknowledged at least `killAfter` entries. */
function appendUntilKilled(file: string, killAfter: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawnTs(APPENDER, [file, '100000']);
    let acked = 0;
    let buffered = '';
    child.stdout!.on('data', (chunk) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) acked = Math.max(acked, Number(line.split(' ')[1]));
      if (acked >= killAfter) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (_code, signal) =>
      signal === 'SIGKILL' ? resolve(acked) : reject(new Error(`appender exited without being killed: ${stderr}`)),
    );
  });
}

describe('crash safety', () => {
  test('SIGKILL mid-append: every complete line verifies and nothing acknowledged is lost', { timeout: 120_000 }, async () => {
    const file = join(dir, 'killed.jsonl');
    let previous = 0;
    // Kill the same log several times, each run resuming where the last one died.
    for (const killAfter of [1000, 2500, 4000]) {
      const acked = await appendUntilKilled(file, killAfter);
      let result = await verifyFile(file, { origin: 'crash-test' });
      if (result.error_code === 'TORN_TAIL') {
        const repair = await repairJsonlFile(file, { origin: 'crash-test' });
        assert.notEqual(repair.action, 'none');
        result = await verifyFile(file, { origin: 'crash-test' });
      }
      assert.equal(result.valid, true, `${result.error_code}: ${result.error_message}`);
      assert.ok(result.entries_verified >= previous + acked, `acknowledged ${previous + acked}, file holds ${result.entries_verified}`);
      previous = result.entries_verified;
    }
  });

  test('repair cuts an incomplete tail and keeps every complete entry', async () => {
    const file = join(dir, 'torn.jsonl');
    const store = await JsonlAuditStore.open(file);
    await new AuditLog(store, { origin: 'o' }).appendMany([{ a: 1 }, { a: 2 }, { a: 3 }]);
    await store.close();
    const intact = await readFile(file, 'utf8');
    await writeFile(file, `${intact}{"a":4,"hash":"12`);
    assert.equal((await verifyFile(file, { origin: 'o' })).error_code, 'TORN_TAIL');
    const repair = await repairJsonlFile(file);
    assert.equal(repair.action, 'truncated');
    assert.equal(repair.removed_bytes, Buffer.byteLength(`{"a":4,"hash":"12`));
    assert.equal(await readFile(file, 'utf8'), intact);
    assert.equal((await repairJsonlFile(file)).action, 'none');
  });

  test('repair keeps a complete last entry that only lacks its newline', async () => {
    const file = join(dir, 'no-newline.jsonl');
    const store = new MemoryAuditStore();
    await new AuditLog(store, { origin: 'o' }).appendMany([{ a: 1 }, { a: 2 }]);
    const lines: string[] = [];
    for await (const line of store.lines()) lines.push(line);
    await writeFile(file, `${lines[0]}\n${lines[1]}`);
    const repair = await repairJsonlFile(file, { origin: 'o' });
    assert.equal(repair.action, 'completed-line');
    const result = await verifyFile(file, { origin: 'o' });
    assert.equal(result.valid, true);
    assert.equal(result.entries_verified, 2);
  });

  test('20 processes appending at once through the CLI write an intact chain', { timeout: 120_000 }, async () => {
    const file = join(dir, 'parallel.jsonl');
    const input = Array.from({ length: 10 }, (_, i) => JSON.stringify({ actor: 'parallel', i })).join('\n');
    const runs = await Promise.all(Array.from({ length: 20 }, () => runCli(['append', file, '--origin', 'parallel'], input)));
    for (const run of runs) assert.equal(run.code, 0, run.stderr);
    const result = await verifyFile(file, { origin: 'parallel' });
    assert.equal(result.valid, true, `${result.error_code}: ${result.error_message}`);
    assert.equal(result.entries_verified, 200);
  });
});
