import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdtemp, readdir, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sampleCredential } from '../src/contract.js';
import { FileCredentialStore, generateEncryptionKey } from '../src/index.js';

const root = await mkdtemp(join(tmpdir(), 'credentials-crash-'));
after(() => rm(root, { recursive: true, force: true }));
const WRITER = fileURLToPath(new URL('./fixtures/writer.ts', import.meta.url));
const COUNT = 1000;

/** What to wait for, in the directory, before the SIGKILL. */
type KillPoint = { what: 'temp files created' | 'files replaced'; count: number };

/**
 * Runs the writer and SIGKILLs it when the directory shows the kill point
 * (seen through inotify, so the kill lands while the other writes of the
 * round are in flight). Resolves with the last acknowledged round of each id.
 */
function writeUntilKilled(directory: string, key: string | undefined, at: KillPoint): Promise<Map<string, number>> {
  return new Promise((resolve, reject) => {
    let seen = 0;
    let started = false;
    const watcher = watch(directory, (_event, name) => {
      if (!started || !name) return;
      const isTemp = name.startsWith('.tmp-');
      if ((at.what === 'temp files created') === isTemp && ++seen >= at.count) child.kill('SIGKILL');
    });
    const child = spawn(process.execPath, ['--conditions=@switchyard/source', '--import=tsx', WRITER, directory, ...(key ? [key] : [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acked = new Map<string, number>();
    let buffered = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line === 'ready') started = true;
        const [word, round, id] = line.split(' ');
        if (word === 'ok') acked.set(id!, Math.max(acked.get(id!) ?? 0, Number(round)));
      }
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      watcher.close();
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`the writer stopped by itself: ${stderr}`));
    });
  });
}

async function removeTempFiles(directory: string): Promise<void> {
  for (const name of await readdir(directory)) if (name.startsWith('.tmp-')) await unlink(join(directory, name));
}

describe('crash safety of the file store', () => {
  for (const encrypted of [false, true]) {
    test(`SIGKILL during ${COUNT} concurrent writes leaves every file old or new, never torn (${encrypted ? 'encrypted' : 'plaintext'})`, {
      timeout: 240_000,
    }, async () => {
      const directory = await mkdtemp(join(root, 'kill-'));
      const key = encrypted ? generateEncryptionKey() : undefined;
      const store = await FileCredentialStore.open({ directory, ...(key ? { encryption: { key } } : {}) });
      const ids = Array.from({ length: COUNT }, (_, i) => `openai-${String(i).padStart(4, '0')}`);
      for (let i = 0; i < COUNT; i += 100) {
        await Promise.all(
          ids.slice(i, i + 100).map((id) => store.put(sampleCredential(id, { token: `v0-${id}`, label: 'v0', priority: 0 }))),
        );
      }
      const outcomes: string[] = [];
      // Kill the same directory twice: while temp files are being written, and while they replace the originals.
      for (const at of [
        { what: 'temp files created', count: 300 },
        { what: 'files replaced', count: 300 },
      ] as const) {
        await removeTempFiles(directory);
        const before = new Map((await store.list()).map((c) => [c.id, c.priority]));
        const acked = await writeUntilKilled(directory, key, at);
        const after = await store.list();
        assert.equal(after.length, COUNT, 'no file was lost');
        const versions = new Set<number>();
        for (const c of after) {
          assert.equal(c.status, 'active', `${c.id}: ${c.status_message}`);
          const version = c.priority;
          assert.deepEqual([c.token, c.label], [`v${version}-${c.id}`, `v${version}`], `${c.id} is one whole version`);
          assert.ok(version >= (acked.get(c.id) ?? 0), `${c.id}: acknowledged v${acked.get(c.id)}, found v${version}`);
          assert.ok(version >= before.get(c.id)!, `${c.id} went back in time`);
          versions.add(version);
        }
        assert.ok(Math.max(...versions) - Math.min(...versions) <= 1, 'every file is the version of the round cut short or the one before');
        // The stores' claims on the directory (this one's, and the killed writer's) are not leftovers of a write.
        const leftovers = (await readdir(directory)).filter((n) => (!n.endsWith('.json') || n.startsWith('.')) && !n.startsWith('.lock-'));
        assert.ok(
          leftovers.every((n) => n.startsWith('.tmp-')),
          `only temp files may be left over: ${leftovers.join(', ')}`,
        );
        // Temp files left behind, or a mix of versions, are writes the kill cut off: proof that it landed mid-round.
        outcomes.push(`${at.what}: ${leftovers.length} temp files, versions ${[...versions].sort().join('/')}`);
        assert.ok(leftovers.length > 0 || versions.size > 1, `the kill landed between rounds (${outcomes.at(-1)})`);
      }
      console.log(`crash outcomes (${encrypted ? 'encrypted' : 'plaintext'}): ${outcomes.join('; ')}`);
      await store.close();
    });
  }
});
