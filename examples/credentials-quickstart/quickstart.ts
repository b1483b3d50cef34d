import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCredentials } from '@switchyard/credentials';

const authDir = await mkdtemp(join(tmpdir(), 'auths-'));
const { manager, close } = await openCredentials({
  authDir,
  auth: { selection_strategy: 'priority', quota: { reset_schedule: { openai: 'daily' } } },
});
manager.events.on('credential:rotated', (e) => console.log(`rotated ${e.from} -> ${e.to} (${e.reason})`));

await manager.add({ id: 'openai-main', provider: 'openai', type: 'api_key', token: 'sk-main', priority: 0, quota: { limit: 1000 } });
await manager.add({ id: 'openai-backup', provider: 'openai', type: 'api_key', token: 'sk-backup', priority: 1 });

const pool = manager.pool('openai');
const first = pool.acquire(); // openai-main: the lowest priority number wins
pool.reportSuccess(first.id, { inputTokens: 900, outputTokens: 100 }); // its 1,000 tokens are used up
const next = pool.acquire(); // openai-backup
console.log(`served by ${first.id}, then ${next.id}`);

for (const c of manager.list()) console.log(`${c.id}: ${c.status}, ${c.quota.used}/${c.quota.limit ?? 'unlimited'} tokens`);
await close();
