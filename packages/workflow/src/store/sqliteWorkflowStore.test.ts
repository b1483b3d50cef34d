import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { runWorkflowStoreContract } from '../contract.js';
import { SqliteWorkflowStore } from '../sqlite.js';

const dir = await mkdtemp(join(tmpdir(), 'workflow-sqlite-'));
after(() => rm(dir, { recursive: true, force: true }));
let n = 0;

runWorkflowStoreContract('sqlite', async () => {
  const path = join(dir, `store-${++n}.db`);
  const store = await SqliteWorkflowStore.open({ path });
  return { store, reopen: () => SqliteWorkflowStore.open({ path }), close: () => store.close() };
});
