/**
 * The manager over the file store with its directory watcher: edits made by
 * hand or by other tools reach the pools through the auth update queue, and
 * a burst of 10,000 file changes loses nothing.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { CredentialManager, FileCredentialStore, NoCredentials } from '../src/index.js';

const root = await mkdtemp(join(tmpdir(), 'credentials-watch-'));
after(() => rm(root, { recursive: true, force: true }));

const opened: { close(): Promise<void> }[] = [];
after(async () => {
  for (const o of opened) await o.close();
});

async function open(directory: string, configFile?: string) {
  const store = await FileCredentialStore.open({ directory });
  const manager = new CredentialManager({ store, ...(configFile ? { configFile } : {}) });
  await manager.start();
  await manager.watching();
  let closed = false;
  const handle = {
    store,
    manager,
    async close() {
      if (closed) return;
      closed = true;
      await manager.close();
      await store.close();
    },
  };
  // Closed after the file even when a test fails part-way, so watchers never keep the process alive.
  opened.push(handle);
  return handle;
}

/** How long a change may take to reach the pools (a loaded machine, a burst of 10,000 files). */
const SETTLE_MS = 60_000;

const tokenOf = (manager: CredentialManager, provider: string) => {
  try {
    return manager.pool(provider).acquire().token;
  } catch (error) {
    if (error instanceof NoCredentials) return undefined;
    throw error;
  }
};

describe('file changes reach the pools', () => {
  test('a file added, edited, broken, fixed and deleted by hand', { timeout: 60_000 }, async () => {
    const directory = await mkdtemp(join(root, 'hand-'));
    const { manager, close } = await open(directory);
    const file = join(directory, 'openai-hand.json');
    await writeFile(file, JSON.stringify({ type: 'api_key', token: 'sk-first', priority: 1 }));
    await eventually('the new file is served', () => tokenOf(manager, 'openai') === 'sk-first', SETTLE_MS);
    await writeFile(file, JSON.stringify({ type: 'api_key', token: 'sk-second', priority: 1 }));
    await eventually('the edit is served', () => tokenOf(manager, 'openai') === 'sk-second', SETTLE_MS);
    await writeFile(file, '{"type": "api_key", "token": ');
    await eventually('the broken file shows as error', () => manager.list('openai')[0]?.status === 'error', SETTLE_MS);
    assert.match(manager.list('openai')[0]!.status_message!, /not valid JSON/);
    assert.equal(tokenOf(manager, 'openai'), undefined, 'a broken file serves nothing');
    await writeFile(file, JSON.stringify({ type: 'api_key', token: 'sk-fixed' }));
    await eventually('the fixed file is served', () => tokenOf(manager, 'openai') === 'sk-fixed', SETTLE_MS);
    await rm(file);
    await eventually('the deleted file is gone', () => manager.list('openai').length === 0, SETTLE_MS);
    await close();
  });

  test('writes back to back, faster than the watcher reports them, still end at the last one', { timeout: 60_000 }, async () => {
    const directory = await mkdtemp(join(root, 'quick-'));
    const { manager, close } = await open(directory);
    const file = join(directory, 'openai-quick.json');
    for (let v = 1; v <= 6; v++) await writeFile(file, JSON.stringify({ type: 'api_key', token: `v${v}` }));
    await eventually('the last write is served', () => tokenOf(manager, 'openai') === 'v6', SETTLE_MS);
    await close();
  });

  test('a change to the config file is queued as config.reload', { timeout: 60_000 }, async () => {
    const directory = await mkdtemp(join(root, 'config-'));
    const configFile = join(directory, 'config.yaml');
    await writeFile(configFile, 'auth:\n  selection_strategy: round_robin\n');
    const { manager, close } = await open(join(directory, 'auths'), configFile);
    const reloads: string[] = [];
    manager.events.on('config:reload', ({ path }) => reloads.push(path));
    await writeFile(configFile, 'auth:\n  selection_strategy: priority\n');
    await eventually('the reload is announced', () => reloads.length > 0, SETTLE_MS);
    assert.equal(reloads[0], configFile);
    await close();
  });

  test('a burst of 10,000 file changes loses nothing', { timeout: 180_000 }, async () => {
    const directory = await mkdtemp(join(root, 'burst-'));
    const FILES = 500;
    const ROUNDS = 20;
    const { manager, close } = await open(directory);
    let overflowed = 0;
    manager.events.on('queue:full', () => overflowed++);
    const write = async (i: number, round: number) => {
      const name = `openai-${String(i).padStart(3, '0')}.json`;
      const body = JSON.stringify({ type: 'api_key', token: `v${round}-${i}`, priority: round });
      if (i % 2 === 0) {
        // Half the files are replaced atomically, as tools do; half are rewritten in place, as editors do.
        const temp = join(directory, `.edit-${name}-${round}`);
        await writeFile(temp, body);
        await rename(temp, join(directory, name));
      } else {
        await writeFile(join(directory, name), body);
      }
    };
    for (let round = 1; round <= ROUNDS; round++) {
      await Promise.all(Array.from({ length: FILES }, (_, i) => write(i, round)));
    }
    const expected = new Map(Array.from({ length: FILES }, (_, i) => [`openai-${String(i).padStart(3, '0')}`, ROUNDS]));
    await eventually(
      'every credential shows its last version',
      () => {
        const records = manager.list('openai');
        return records.length === FILES && records.every((r) => r.status === 'active' && r.priority === expected.get(r.id));
      },
      SETTLE_MS,
    );
    const pool = manager.pool('openai');
    const tokens = new Set(Array.from({ length: FILES }, () => pool.acquire().token));
    assert.deepEqual([...tokens].sort(), Array.from({ length: FILES }, (_, i) => `v${ROUNDS}-${i}`).sort());
    const stats = manager.queueStats();
    assert.ok(stats.max_depth <= 256, `depth stayed within 256 (was ${stats.max_depth})`);
    console.log(
      `burst: ${stats.enqueued} updates queued, ${stats.coalesced} coalesced, max depth ${stats.max_depth}, queue full ${overflowed} time(s)`,
    );
    await close();
  });
});
