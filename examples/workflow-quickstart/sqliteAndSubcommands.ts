/**
 * The embedded default: the SQLite store at <repo>/.agileplus/agileplus.db,
 * a hidden subcommand run through the registry and recorded in
 * <repo>/.agileplus/audit.jsonl, and a feature's trail exported as JSONL.
 * Usage: node sqliteAndSubcommands.ts <git repository>
 */
import { join } from 'node:path';
import { BUILTIN_SUBCOMMANDS, runSubcommand, SubcommandAuditLog, SubcommandRegistry, Workflow } from '@switchyard/workflow';
import { ArtifactStore, GitRepository } from '@switchyard/workflow/git';
import { SqliteWorkflowStore } from '@switchyard/workflow/sqlite';

const repoRoot = process.argv[2]!;
const store = await SqliteWorkflowStore.open({ repoRoot });
const workflow = new Workflow({ store, repoName: 'shop' });
await workflow.createFeature({ slug: '002-search', title: 'Search', actor: 'alice' });
const ctx = {
  workflow,
  git: new GitRepository(repoRoot),
  artifacts: new ArtifactStore(join(repoRoot, '.agileplus', 'artifacts')),
  actor: 'alice',
};
const log = await SubcommandAuditLog.open(repoRoot, { repoName: 'shop' });
const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
const written = await runSubcommand(
  registry,
  log,
  'artifact:write',
  { feature_slug: '002-search', relative_path: 'spec.md', content: '# Search\n' },
  ctx,
);
console.log('artifact:write exit', written.exit_code, JSON.stringify(written.result));
const refused = await runSubcommand(registry, log, 'branch:create', { name: '--upload-pack=evil' }, ctx);
console.log('branch:create exit', refused.exit_code, refused.error?.code);
console.log('subcommand log valid:', (await log.verify()).valid);
process.stdout.write(await workflow.audit.exportJsonl('002-search'));
await log.close();
await store.close();
