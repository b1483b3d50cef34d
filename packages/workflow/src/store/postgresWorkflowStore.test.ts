import { test } from 'node:test';
import { postgresForTests } from '@switchyard/test-support';
import { runWorkflowStoreContract } from '../contract.js';
import { PostgresWorkflowStore } from '../postgres.js';

const pg = await postgresForTests(import.meta.url);

if (pg.available) {
  runWorkflowStoreContract('postgres', async () => {
    // Every subject starts from empty tables: the schema is shared by the file, so clear it first.
    const store = await PostgresWorkflowStore.open({ connectionString: pg.url, max: 4 });
    await truncateAll(pg.url);
    return { store, reopen: () => PostgresWorkflowStore.open({ connectionString: pg.url, max: 2 }), close: () => store.close() };
  });
} else {
  test('PostgreSQL workflow store contract', { skip: pg.skip }, () => {});
}

async function truncateAll(url: string): Promise<void> {
  const { default: pgModule } = await import('pg');
  const client = new pgModule.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      'TRUNCATE features, work_packages, evidence, metrics, governance_rules, contracts, audit_entries, backlog_items, agent_jobs, sync_links, webhook_deliveries RESTART IDENTITY CASCADE',
    );
  } finally {
    await client.end();
  }
}
